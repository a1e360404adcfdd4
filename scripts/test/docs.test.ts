// The repository's documents stand on their own and speak to users: every link is to a file of
// the repository that exists (a clone has nothing beside it), none to a web page that may move or
// a place only the maintainers can see, and none names the project's own process (issue numbers,
// "the issue", work diaries).
//
// The rules are pure functions over documents (a path and its text), so the test shows each one
// catching a violation planted in a made-up document: a rule that passes on the real tree proves
// nothing until it has failed once.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { posix } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

interface Document {
  /** Relative to the repository's root, with `/`. */
  readonly path: string
  readonly text: string
}

/** A file of the repository, by its path from the root: whether it is there. */
type Exists = (path: string) => boolean

/** The documents: README.md, everything under docs/ and examples/, and each package's README. */
const documentPaths = (): Array<string> => {
  const walk = (dir: string): Array<string> =>
    readdirSync(posix.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) return []
      const path = posix.join(dir, entry.name)
      return entry.isDirectory() ? walk(path) : [path]
    })
  const packages = readdirSync(posix.join(ROOT, "packages")).map((name) => `packages/${name}/README.md`)
  return ["README.md", ...walk("docs"), ...walk("examples"), ...packages].filter((path) => existsSync(posix.join(ROOT, path)))
}

const TEXT = /\.(md|ts|js|mjs|html|json|txt|sh)$/

/** Hosts a document may name in a URL: this machine, documentation's reserved names, and single-label names (`http://mzk`, an nginx upstream). */
const LOCAL_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0|[^.]*|(.+\.)?example(\.(com|org|net))?|.+\.(test|invalid|localhost|internal|local))$/i

const withoutCode = (markdown: string) => markdown.replace(/^\s*```[\s\S]*?^\s*```/gm, "").replace(/`[^`\n]*`/g, "")

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

const anchorsOf = (markdown: string): Set<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const match of markdown.replace(/^\s*```[\s\S]*?^\s*```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/**
 * Each link target of a Markdown document (links and images outside code). A page's `href` and
 * `src` are URLs relative to where it is served, not files of the repository: only their hosts
 * are judged, with every other URL of the text.
 */
const targetsOf = (document: Document): Array<string> =>
  document.path.endsWith(".md")
    ? [...withoutCode(document.text).matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)
    : []

/**
 * Links that leave the repository (a URL to another host; a path that climbs out of the root)
 * and links to a file or heading that is not there. URLs anywhere in the text count, code
 * included: a command a reader pastes reaches the same place.
 */
export const badLinks = (document: Document, exists: Exists, read: (path: string) => string | undefined): Array<string> => {
  const problems: Array<string> = []
  for (const match of document.text.matchAll(/\b([a-z][a-z0-9+.-]*):\/\/([^/\s"'`)<>\]]*)/gi)) {
    const authority = match[2]!.replace(/^[^@]*@/, "")
    const host = authority.startsWith("[") ? authority.replace(/\].*$/, "]") : authority.replace(/:.*$/, "")
    if (host.startsWith("$") || host.startsWith("…") || host === "") continue
    if (!LOCAL_HOST.test(host)) problems.push(`${document.path}: a link outside the repository: ${match[0]}`)
  }
  for (const target of targetsOf(document)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      // A URL: its host was judged above; other schemes (mailto:, data:) leave the repository too.
      if (!/^https?:/i.test(target)) problems.push(`${document.path}: a link outside the repository: ${target}`)
      continue
    }
    const [file, anchor] = target.split("#") as [string, string | undefined]
    const path = file === "" ? document.path : posix.normalize(posix.join(posix.dirname(document.path), decodeURIComponent(file)))
    if (path.startsWith("../") || path === "..") {
      problems.push(`${document.path}: a link outside the repository: ${target}`)
    } else if (!exists(path)) {
      problems.push(`${document.path}: a link to a file that does not exist: ${target}`)
    } else if (anchor !== undefined && anchor !== "" && path.endsWith(".md")) {
      const text = read(path)
      if (text !== undefined && !anchorsOf(text).has(decodeURIComponent(anchor).toLowerCase())) {
        problems.push(`${document.path}: a link to a heading that does not exist: ${target}`)
      }
    }
  }
  return problems
}

/** Words of the project's own process, which mean nothing to a reader of the repository. */
const INTERNAL_PROCESS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bissues?\s+#?\d+/gi, "an issue number"],
  // `#41` in prose (a CSS colour in a page's style is not one).
  [/(?<=^|[\s(])#\d{1,5}\b(?![\w-])(?![^{}]*;)/gm, "an issue number"],
  [/\b(?:the|this|that|these|those|each|before|after)\s+(?:\w+'s\s+)?issues?\b(?!\s+(?:of|with)\b)/gi, "the issue"],
  [/\bissue's\b/gi, "the issue"],
  [/\b(?:this|an? earlier|a later|another|each)\s+session(?:'s)?\b(?!\s+token)/gi, "a work session"],
  [/\b(?:work\s+)?diary\b/gi, "a work diary"],
  [/\bthe brief\b|\bthe lead\b(?!\s+(?:to|of|time))/gi, "the project's own process"],
  [/^\s*(?:[-*]\s+)?\**(?:\d{4}-\d{2}-\d{2})\**\s*[:—–]/gm, "a dated note"],
  [/\b(?:as of|update[sd]?|edited|note)\s*\(?\s*\d{4}-\d{2}-\d{2}/gi, "a dated note"]
]

export const internalProcess = (document: Document): Array<string> =>
  INTERNAL_PROCESS.flatMap(([pattern, what]) =>
    [...document.text.matchAll(pattern)].map((m) => {
      const line = document.text.slice(0, m.index).split("\n").length
      return `${document.path}:${line}: ${what}: "${m[0].trim()}"`
    }))

const repositoryExists: Exists = (path) => existsSync(posix.join(ROOT, path))
const readRepository = (path: string) => {
  const file = posix.join(ROOT, path)
  return existsSync(file) && statSync(file).isFile() ? readFileSync(file, "utf8") : undefined
}

const documents = documentPaths().filter((path) => TEXT.test(path)).map((path): Document => ({ path, text: readFileSync(posix.join(ROOT, path), "utf8") }))

describe("the repository's documents", () => {
  it("are found (the checks below are not vacuous)", () => {
    const paths = documents.map((d) => d.path)
    for (const path of ["README.md", "docs/api/README.md", "docs/api/decisions.md", "packages/core/README.md", "examples/README.md"]) {
      expect(paths).toContain(path)
    }
    expect(targetsOf(documents.find((d) => d.path === "README.md")!).length).toBeGreaterThan(5)
  })

  it("link only to files of the repository that exist, and to nowhere outside it", () => {
    expect(documents.flatMap((document) => badLinks(document, repositoryExists, readRepository))).toEqual([])
  })

  it("speak to users, not of the project's own process", () => {
    expect(documents.flatMap(internalProcess)).toEqual([])
  })
})

describe("each rule catches what it is for", () => {
  const exists: Exists = (path) => ["README.md", "docs/api/README.md", "docs/guide.md"].includes(path)
  const read = (path: string) => (path === "docs/guide.md" ? "# Guide\n\n## Set-up (a fresh machine)\n" : undefined)
  const doc = (text: string, path = "docs/guide.md"): Document => ({ path, text })

  it("a link outside the repository: another host, a path above the root, another scheme", () => {
    expect(badLinks(doc("See [the spec](../shared/spec/proof-service-api.md).", "README.md"), exists, read)).toEqual([
      "README.md: a link outside the repository: ../shared/spec/proof-service-api.md"
    ])
    expect(badLinks(doc("As [Stripe says](https://stripe.com/docs/api)."), exists, read)).toEqual([
      "docs/guide.md: a link outside the repository: https://stripe.com"
    ])
    expect(badLinks(doc("```sh\ncurl -sL https://github.com/x/y/releases | sh\n```"), exists, read)).toHaveLength(1)
    expect(badLinks(doc("Write to [us](mailto:team@mzk.dev)."), exists, read)).toEqual([
      "docs/guide.md: a link outside the repository: mailto:team@mzk.dev"
    ])
    expect(badLinks(doc('<script src="https://cdn.jsdelivr.net/npm/snarkjs"></script>', "examples/page.html"), exists, read)).toHaveLength(1)
  })

  it("a link to a file or heading that is not there", () => {
    expect(badLinks(doc("See [the API](api/REAMDE.md)."), exists, read)).toEqual([
      "docs/guide.md: a link to a file that does not exist: api/REAMDE.md"
    ])
    expect(badLinks(doc("See [set-up](guide.md#setup)."), exists, read)).toEqual([
      "docs/guide.md: a link to a heading that does not exist: guide.md#setup"
    ])
  })

  it("leaves alone what is not a link away: this machine, placeholders, repository files, headings that exist", () => {
    const fine = [
      "Run `curl http://127.0.0.1:8080/api/v1/proofs` or open http://localhost:8080/docs.",
      "createClient({ baseUrl: \"https://mzk.example.com\" }); git clone https://example.com/mzk.git",
      "proxy_pass http://mzk; return 301 https://$host$request_uri; postgres://mzk@db:5432/mzk",
      "See [the API](api/README.md), [the README](../README.md) and [set-up](guide.md#set-up-a-fresh-machine)."
    ]
    for (const text of fine) expect(badLinks(doc(text), exists, read), text).toEqual([])
  })

  it("the project's own process: issue numbers, the issue, sessions' work, diaries, dated notes", () => {
    const planted = [
      "# Noir\n\nIssue 28, item 2: Noir programs.",
      "Two runs of the code before issue\n16 (03c3067).",
      "The issue's target is met.",
      "The code before this session's issues (f4345f8).",
      "Fixed in #41.",
      "- 2026-11-27: measured again after the fix.",
      "Work diary: tried three layouts."
    ]
    for (const text of planted) expect(internalProcess(doc(text)), text).not.toEqual([])
  })

  it("leaves alone the product's own words: sessions of an embedding app, validation issues, measurement dates", () => {
    const fine = [
      "Users call mzk with their session token; a session holds every scope; the actor is the key's id, or the session's.",
      "decodeInput(schema) turns every issue into one `details` entry.",
      "Two runs back to back on 2026-11-23, load 1.2–1.8.",
      "The target: p99 < 25 ms (commit f846e96).",
      "Headings link as [usage](#usage-1)."
    ]
    for (const text of fine) expect(internalProcess(doc(text)), text).toEqual([])
  })
})
