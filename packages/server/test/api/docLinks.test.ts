import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "../processes.js"

/**
 * The repository's documents stand on their own: every link is to a file of the repository that
 * exists (a clone has nothing beside it), none to a web page that may move or a place only the
 * maintainers can see. Examples in code blocks (`https://hooks.example.com/…`) are not links.
 */
const documents = execFileSync("git", ["ls-files", "*.md"], { cwd: root, encoding: "utf8" }).split("\n").filter(Boolean)

/** Markdown links and images, `[text](target)`, outside fenced code blocks and inline code. */
const linksOf = (markdown: string): Array<string> =>
  [...markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)

describe("the repository's documents", () => {
  it("are found (the check below is not vacuous)", () => {
    expect(documents).toContain("README.md")
    expect(documents.length).toBeGreaterThan(10)
    expect(linksOf(readFileSync(join(root, "README.md"), "utf8")).length).toBeGreaterThan(5)
  })

  it("link only to files of the repository that exist", () => {
    const outside: Array<string> = []
    for (const document of documents) {
      for (const target of linksOf(readFileSync(join(root, document), "utf8"))) {
        if (target.startsWith("#")) continue
        const file = resolve(dirname(join(root, document)), decodeURIComponent(target.split("#")[0]!))
        const inside = !/^[a-z][a-z0-9+.-]*:/i.test(target) && !relative(root, file).startsWith("..")
        if (!inside || !existsSync(file)) outside.push(`${document}: ${target}`)
      }
    }
    expect(outside).toEqual([])
  })

  it("speak to users, not of the project's own process (issue numbers)", () => {
    const named = documents.flatMap((document) =>
      [...readFileSync(join(root, document), "utf8").matchAll(/\bissues? #?\d+/gi)].map((m) => `${document}: ${m[0]}`))
    expect(named).toEqual([])
  })
})
