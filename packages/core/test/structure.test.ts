import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const src = fileURLToPath(new URL("../src", import.meta.url))

const files = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** Each module of the core → the modules of the core it imports (type-only imports included). */
const graph = new Map(files(src).map((file) => {
  const imports = [...readFileSync(file, "utf8").matchAll(/^(?:import|export)[^"']*?from\s+["'](\.[^"']+)["']/gm)]
    .map((match) => resolve(dirname(file), match[1]!.replace(/\.js$/, ".ts")))
  return [relative(src, file), imports.map((path) => relative(src, path))]
}))

const folderOf = (module: string) => dirname(module)

/**
 * Folder → the other folders its modules import. A loop here (events/ importing webhooks/ while
 * webhooks/ imports events/) is a cycle no file-level check sees when the files involved differ.
 */
const folders = new Map<string, Array<string>>()
for (const [module, imports] of graph) {
  const targets = folders.get(folderOf(module)) ?? []
  for (const target of imports.map(folderOf)) if (target !== folderOf(module) && !targets.includes(target)) targets.push(target)
  folders.set(folderOf(module), targets)
}

const cycles = (edges: ReadonlyMap<string, ReadonlyArray<string>>) => {
  const found: Array<string> = []
  const state = new Map<string, "open" | "done">()
  const visit = (node: string, path: Array<string>) => {
    if (state.get(node) === "done") return
    if (state.get(node) === "open") return void found.push([...path.slice(path.indexOf(node)), node].join(" → "))
    state.set(node, "open")
    for (const next of edges.get(node) ?? []) visit(next, [...path, node])
    state.set(node, "done")
  }
  for (const node of edges.keys()) visit(node, [])
  return found
}

describe("the core's module structure", () => {
  it("has no import cycle", () => {
    expect(graph.size).toBeGreaterThan(40)
    expect(cycles(graph)).toEqual([])
  })

  it("has no import loop between folders", () => {
    expect(folders.size).toBeGreaterThan(10)
    expect(cycles(folders)).toEqual([])
  })

  it("keeps events/ the outbox only: it imports the kernel and nothing of any feature", () => {
    for (const [module, imports] of graph) {
      if (module.startsWith("events/")) expect(imports.filter((i) => !i.startsWith("kernel/") && !i.startsWith("events/")), module).toEqual([])
    }
  })

  it("keeps the shared kernel free of features, and loops free of the composition", () => {
    const features = ["accounts/", "keys/", "events/", "rateLimits/", "webhooks/", "proofs/"]
    for (const [module, imports] of graph) {
      if (module.startsWith("kernel/")) expect(imports.filter((i) => !i.startsWith("kernel/")), module).toEqual([])
      if (features.some((f) => module.startsWith(f))) expect(imports.filter((i) => !i.includes("/")), module).toEqual([])
    }
  })
})
