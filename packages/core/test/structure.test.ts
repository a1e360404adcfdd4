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

const cycles = () => {
  const found: Array<string> = []
  const state = new Map<string, "open" | "done">()
  const visit = (module: string, path: Array<string>) => {
    if (state.get(module) === "done") return
    if (state.get(module) === "open") return void found.push([...path.slice(path.indexOf(module)), module].join(" → "))
    state.set(module, "open")
    for (const next of graph.get(module) ?? []) visit(next, [...path, module])
    state.set(module, "done")
  }
  for (const module of graph.keys()) visit(module, [])
  return found
}

describe("the core's module structure", () => {
  it("has no import cycle", () => {
    expect(graph.size).toBeGreaterThan(40)
    expect(cycles()).toEqual([])
  })

  it("keeps the shared kernel free of features, and loops free of the composition", () => {
    const features = ["accounts/", "keys/", "events/", "rateLimits/", "webhooks/", "proofs/"]
    for (const [module, imports] of graph) {
      if (module.startsWith("kernel/")) expect(imports.filter((i) => !i.startsWith("kernel/")), module).toEqual([])
      if (features.some((f) => module.startsWith(f))) expect(imports.filter((i) => !i.includes("/")), module).toEqual([])
    }
  })
})
