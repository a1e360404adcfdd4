// Plain JavaScript in the packages' sources is type-checked like the TypeScript beside it. The
// proving engine's thread and child-process entries, and the modules they import, stay JavaScript
// (Node 20 loads a worker or a child only as JavaScript, and a TypeScript loader in each costs
// 0.3 s or more per start), so they carry `// @ts-check` and JSDoc types: the one program of
// `pnpm typecheck` checks them under the same strict options, and their declarations are emitted
// from them. A hand-written declaration beside such a module would be a second statement of its
// types that nothing checks against the code, so there is none; the native addon's loader is the
// exception, its `.d.ts` being the addon's own interface.
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

interface SourceFile {
  readonly path: string
  readonly text: string
}

const JAVASCRIPT = /\.(mjs|js)$/
const DECLARATION = /\.d\.(mts|ts)$/

/** What is wrong with the JavaScript of these files, one line each; empty when nothing is. */
export const untypedJavaScript = (files: ReadonlyArray<SourceFile>): Array<string> => {
  const paths = new Set(files.map((file) => file.path))
  const problems: Array<string> = []
  for (const file of files) {
    if (JAVASCRIPT.test(file.path)) {
      const declaration = file.path.replace(/\.mjs$/, ".d.mts").replace(/\.js$/, ".d.ts")
      const declared = paths.has(declaration)
      if (declared && file.path.endsWith(".mjs")) problems.push(`${declaration}: a hand-written declaration of ${file.path}; type the module with JSDoc instead`)
      // Only comments may come before the pragma: TypeScript reads it at the top of the file.
      const head = file.text.split("\n").filter((line) => !line.startsWith("//") || line.startsWith("// @ts-check"))
      if (!declared && !file.text.split("\n").some((line) => line === "// @ts-check")) {
        problems.push(`${file.path}: no // @ts-check, so nothing checks its types`)
      } else if (!declared && head[0] !== "// @ts-check") {
        problems.push(`${file.path}: // @ts-check must come before the first line of code`)
      }
    }
  }
  return problems
}

const sourceFiles = (): Array<SourceFile> => {
  const out: Array<SourceFile> = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (JAVASCRIPT.test(entry.name) || DECLARATION.test(entry.name)) out.push({ path: relative(ROOT, path), text: readFileSync(path, "utf8") })
    }
  }
  for (const pkg of readdirSync(join(ROOT, "packages"), { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue
    try {
      walk(join(ROOT, "packages", pkg.name, "src"))
    } catch {
      // A package without src/.
    }
  }
  return out
}

describe("JavaScript in the packages' sources", () => {
  it("is type-checked, with no hand-written declaration beside it", () => {
    const files = sourceFiles()
    expect(files.filter((file) => file.path.endsWith(".mjs")).length).toBeGreaterThan(10)
    expect(untypedJavaScript(files)).toEqual([])
  })

  it("finds a module without the pragma, one with it after code, and a declaration beside one", () => {
    const checked = { path: "packages/p/src/a.mjs", text: "// What a.mjs holds.\n// @ts-check\nexport const a = 1\n" }
    expect(untypedJavaScript([checked])).toEqual([])
    expect(untypedJavaScript([{ path: "packages/p/src/b.mjs", text: "// What b.mjs holds.\nexport const b = 1\n" }])).toEqual([
      "packages/p/src/b.mjs: no // @ts-check, so nothing checks its types"
    ])
    expect(untypedJavaScript([{ path: "packages/p/src/c.mjs", text: "export const c = 1\n// @ts-check\n" }])).toEqual([
      "packages/p/src/c.mjs: // @ts-check must come before the first line of code"
    ])
    expect(untypedJavaScript([checked, { path: "packages/p/src/a.d.mts", text: "export declare const a: number\n" }])).toEqual([
      "packages/p/src/a.d.mts: a hand-written declaration of packages/p/src/a.mjs; type the module with JSDoc instead"
    ])
  })
})
