// The workspace's module structure: no import cycle anywhere (type-only imports included: a cycle
// of types is still two modules that cannot be understood, moved or published apart), packages
// import each other only downward, and each imports only what its package.json declares. And the
// package.json files as pnpm reads them at install: no cycle among the packages they name, of any
// kind of dependency, and no bin that only a build makes.
//
// The rules are pure functions over a `Tree` (every source module → the specifiers it imports),
// so the test can show each rule catching a violation planted in a copy of the real tree, without
// writing a file: a rule that passes on the real tree proves nothing until it has failed once.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { posix } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/**
 * Which workspace packages the `src` of each package may import, lowest layer first. Each row
 * names only packages in rows above it, which is what keeps the direction one way. Each row is
 * what the package imports today and no more, so a new edge between packages is a decision made
 * here: webhooks and the client import nothing of the workspace (they are published without
 * dependencies), and the HTTP package sits over the proving engine, whose reader of uploaded
 * archives it uses.
 */
const LAYERS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["@mzk/core", []],
  ["@mzk/adapters-sql", ["@mzk/core"]],
  ["@mzk/adapters-sqlite", ["@mzk/core", "@mzk/adapters-sql"]],
  ["@mzk/adapters-postgres", ["@mzk/core", "@mzk/adapters-sql"]],
  ["@mzk/prover-native", []],
  ["@mzk/proving", ["@mzk/core", "@mzk/prover-native"]],
  ["@mzk/http", ["@mzk/core", "@mzk/proving"]],
  ["@mzk/webhooks", []],
  ["@mzk/client", []],
  ["@mzk/testkit", ["@mzk/core", "@mzk/adapters-sql", "@mzk/adapters-sqlite", "@mzk/webhooks"]],
  ["@mzk/storage-conformance", ["@mzk/core", "@mzk/testkit"]],
  ["@mzk/server", ["@mzk/core", "@mzk/adapters-sql", "@mzk/adapters-sqlite", "@mzk/adapters-postgres", "@mzk/proving", "@mzk/http"]],
  ["@mzk/examples", ["@mzk/server"]]
]

const ALLOWED: ReadonlyMap<string, ReadonlySet<string>> = new Map(LAYERS.map(([name, below]) => [name, new Set(below)]))

/**
 * Where the reader of uploaded archives (tar, zip) used to be. Reading files is the proving engine's
 * work (`@mzk/proving/archive`): no package but the HTTP package itself imports it from there.
 */
const ARCHIVE_READER = "@mzk/http/archive"

interface Package {
  readonly name: string
  /** Its folder, from the workspace's root (`packages/core`). */
  readonly dir: string
  /** What it may import at run time: its dependencies and peer dependencies. */
  readonly declared: ReadonlySet<string>
  /** Everything its package.json names, of every kind (devDependencies too): what pnpm links and orders by. */
  readonly named: ReadonlySet<string>
  /** The files its `bin` names, from the workspace's root. */
  readonly bins: ReadonlyArray<string>
  /** Its `exports`: each subpath (".", "./archive") → what its conditions point at. */
  readonly exports: ReadonlyMap<string, ReadonlyArray<string>>
}

interface Tree {
  readonly packages: ReadonlyArray<Package>
  /** The workspace root's own package.json: its name and everything it names (the tests' tools). */
  readonly root: { readonly name: string; readonly named: ReadonlySet<string> }
  /** Each source module (a path from the workspace's root) → the specifiers it imports. */
  readonly imports: ReadonlyMap<string, ReadonlyArray<string>>
}

/** One import: the module and what it imports, as it is written. What a rule reports is a list of them. */
interface Import {
  readonly file: string
  readonly import: string
}

// ---------------------------------------------------------------------------------------------
// Reading the workspace: the only part that touches the disk.

/** The `packages:` globs of pnpm-workspace.yaml (a plain list: no YAML parser needed for it). */
const workspaceGlobs = (yaml: string): Array<string> => {
  const list = /^packages:\s*\n((?:[ \t]+-.*(?:\n|$))+)/m.exec(yaml)?.[1] ?? ""
  return list.split("\n").map((line) => line.replace(/^\s*-\s*/, "").replace(/^["']|["']$/g, "").trim()).filter(Boolean)
}

/** The folders a glob names; only the two forms the workspace uses (`dir/*` and `dir`). */
const expand = (glob: string): Array<string> => {
  if (!glob.endsWith("/*")) {
    if (/[*?{[!]/.test(glob)) throw new Error(`structure test: teach expand() the workspace glob ${glob}`)
    return [glob]
  }
  const parent = glob.slice(0, -2)
  if (!existsSync(posix.join(ROOT, parent))) return []
  return readdirSync(posix.join(ROOT, parent), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => posix.join(parent, e.name))
}

/** Every string a subpath's conditions lead to, however deeply the conditions nest. */
const exportTargets = (entry: unknown): Array<string> =>
  typeof entry === "string" ? [entry] : entry !== null && typeof entry === "object" ? Object.values(entry).flatMap(exportTargets) : []

interface Manifest {
  readonly name: string
  readonly dependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly optionalDependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly bin?: string | Record<string, string>
  readonly exports?: Record<string, unknown>
}

const readManifest = (dir: string) => JSON.parse(readFileSync(posix.join(ROOT, dir, "package.json"), "utf8")) as Manifest

const namedBy = (json: Manifest): ReadonlySet<string> =>
  new Set([json.dependencies, json.devDependencies, json.optionalDependencies, json.peerDependencies].flatMap((field) => Object.keys(field ?? {})))

const readPackage = (dir: string): Package => {
  const json = readManifest(dir)
  const exportsField = Object.entries(json.exports ?? {}).map(([subpath, entry]) =>
    [subpath, exportTargets(entry).map((target) => posix.join(dir, target))] as const
  )
  return {
    name: json.name,
    dir,
    declared: new Set([...Object.keys(json.dependencies ?? {}), ...Object.keys(json.peerDependencies ?? {})]),
    named: namedBy(json),
    bins: (typeof json.bin === "string" ? [json.bin] : Object.values(json.bin ?? {})).map((bin) => posix.join(dir, bin)),
    exports: new Map(exportsField)
  }
}

const SOURCE = /\.(ts|mts|mjs|js)$/

const sourceFiles = (dir: string): Array<string> =>
  !existsSync(posix.join(ROOT, dir))
    ? []
    : readdirSync(posix.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = posix.join(dir, entry.name)
      if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path)
      return SOURCE.test(entry.name) ? [path] : []
    })

/**
 * What a module imports: `import`, `import type`, `export … from`, `import("…")` with a literal,
 * as TypeScript's own scanner reads them (comments and strings that merely look like imports are
 * not imports to it, as they would be to a regular expression).
 */
const importsOf = (file: string): Array<string> =>
  ts.preProcessFile(readFileSync(posix.join(ROOT, file), "utf8"), true, true).importedFiles.map((imported) => imported.fileName)

const readTree = (): Tree => {
  const globs = workspaceGlobs(readFileSync(posix.join(ROOT, "pnpm-workspace.yaml"), "utf8"))
  const dirs = globs.flatMap(expand).sort().filter((dir) => existsSync(posix.join(ROOT, dir, "package.json")))
  const packages = dirs.map(readPackage)
  const modules = packages.flatMap((pkg) => sourceFiles(posix.join(pkg.dir, "src")))
  const root = readManifest(".")
  return { packages, root: { name: root.name, named: namedBy(root) }, imports: new Map(modules.map((file) => [file, importsOf(file)])) }
}

/**
 * The folders .gitignore keeps out of the repository wherever they are (`dist/`, `node_modules/`):
 * what a build or an install makes. Only that form of its lines is read; it is the form they take.
 */
const IGNORED_FOLDERS = readFileSync(posix.join(ROOT, ".gitignore"), "utf8").split("\n").map((line) => line.trim())
  .filter((line) => /^[\w.-]+\/$/.test(line)).map((line) => line.slice(0, -1))

// ---------------------------------------------------------------------------------------------
// Resolving: pure, over the tree's own list of modules.

const isRelative = (specifier: string) => specifier.startsWith("./") || specifier.startsWith("../")

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
const packageName = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

const packageOf = (tree: Tree, file: string): Package | undefined => tree.packages.find((pkg) => file.startsWith(`${pkg.dir}/`))

const packageNamed = (tree: Tree, name: string): Package | undefined => tree.packages.find((pkg) => pkg.name === name)

/**
 * The files a path written in an import may be: `./x.js` is `x.ts` to the compiler (or `x.d.ts`)
 * and `x.js` at run time; `./x.mjs` is `x.mts`, `x.d.mts` or `x.mjs`. Undefined for a path that is
 * not a module's (`./catalog.json`).
 */
const candidates = (path: string): ReadonlyArray<string> | undefined => {
  const match = /^(.*)\.(js|mjs|ts|mts)$/.exec(path)
  if (match === null) return undefined
  const [, stem, ext] = match
  if (ext === "js") return [`${stem}.ts`, `${stem}.d.ts`, path]
  if (ext === "mjs") return [`${stem}.mts`, `${stem}.d.mts`, path]
  return [path]
}

/**
 * The modules of the tree an import reaches: a relative path's file(s), or a workspace package's
 * exported file(s). Empty for a Node built-in, another registry's package or a non-module file;
 * undefined where it should reach a module of the tree and reaches none.
 */
const targets = (tree: Tree, file: string, specifier: string): ReadonlyArray<string> | undefined => {
  const known = (paths: ReadonlyArray<string>) => paths.filter((path) => tree.imports.has(path))
  if (isRelative(specifier)) {
    const paths = candidates(posix.join(posix.dirname(file), specifier))
    if (paths === undefined) return []
    const found = known(paths)
    return found.length > 0 ? found : undefined
  }
  const pkg = packageNamed(tree, packageName(specifier))
  if (pkg === undefined) return []
  const exported = pkg.exports.get(`.${specifier.slice(pkg.name.length)}`)
  const found = known(exported ?? [])
  return found.length > 0 ? found : undefined
}

const everyImport = (tree: Tree): Array<Import> =>
  [...tree.imports].flatMap(([file, specifiers]) => specifiers.map((specifier) => ({ file, import: specifier })))

/** Module → the modules it imports, across packages (through their `exports`) as within them. */
const moduleGraph = (tree: Tree): Map<string, Array<string>> =>
  new Map([...tree.imports].map(([file, specifiers]) => [file, [...new Set(specifiers.flatMap((s) => targets(tree, file, s) ?? []))]]))

// ---------------------------------------------------------------------------------------------
// The rules.

/** Imports that should reach a module of the tree and reach none: a hole the cycle check cannot see through. */
const unresolvedImports = (tree: Tree): Array<Import> => everyImport(tree).filter((i) => targets(tree, i.file, i.import) === undefined)

/** The groups of nodes that reach each other (Tarjan): each group of two or more, or a node importing itself, holds a cycle. */
const knots = (edges: ReadonlyMap<string, ReadonlyArray<string>>): Array<Set<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const found: Array<Set<string>> = []
  const visit = (node: string) => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) visit(next)
      if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, low.get(next)!))
    }
    if (low.get(node) !== index.get(node)) return
    const knot = new Set<string>()
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      knot.add(member)
      if (member === node) break
    }
    if (knot.size > 1 || (edges.get(node) ?? []).includes(node)) found.push(knot)
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node)
  return found
}

/** The shortest way from `start` back to itself inside `knot` (breadth first), as the path walked. */
const loopFrom = (edges: ReadonlyMap<string, ReadonlyArray<string>>, knot: ReadonlySet<string>, start: string): Array<string> => {
  const cameFrom = new Map<string, string>()
  const queue = [start]
  for (let at = 0; at < queue.length; at++) {
    const node = queue[at]!
    for (const next of edges.get(node) ?? []) {
      if (!knot.has(next)) continue
      if (next === start) {
        const path = [start]
        for (let step: string | undefined = node; step !== start && step !== undefined; step = cameFrom.get(step)) path.splice(1, 0, step)
        return [...path, start]
      }
      if (cameFrom.has(next)) continue
      cameFrom.set(next, node)
      queue.push(next)
    }
  }
  return [start, start]
}

/** A cycle of modules (the first one again at the end), and how many modules its knot holds. */
interface Cycle {
  readonly path: ReadonlyArray<string>
  readonly knot: number
}

/**
 * One cycle of each knot, the shortest (the first module's in name order where lengths tie): a
 * knot of a dozen modules has many cycles, and its shortest is the edge to cut first.
 */
const cycles = (edges: ReadonlyMap<string, ReadonlyArray<string>>): Array<Cycle> =>
  knots(edges).map((knot) => ({
    path: [...knot].sort().map((start) => loopFrom(edges, knot, start)).reduce((best, loop) => (loop.length < best.length ? loop : best)),
    knot: knot.size
  }))

/** Imports of a workspace package that the importing package's row of `LAYERS` does not allow. */
const upwardImports = (tree: Tree): Array<Import> =>
  everyImport(tree).filter(({ file, import: specifier }) => {
    const from = packageOf(tree, file)
    const to = isRelative(specifier) ? undefined : packageNamed(tree, packageName(specifier))
    if (from === undefined || to === undefined || to === from) return false
    return !(ALLOWED.get(from.name)?.has(to.name) ?? false)
  })

/** Workspace packages a package.json depends on (so its users install) that `LAYERS` does not allow it. */
const upwardDependencies = (tree: Tree): Array<Import> =>
  tree.packages.flatMap((pkg) =>
    [...pkg.declared]
      .filter((name) => packageNamed(tree, name) !== undefined && !(ALLOWED.get(pkg.name)?.has(name) ?? false))
      .map((name) => ({ file: `${pkg.dir}/package.json`, import: name }))
  )

/**
 * Imports of anything but the package's own files, Node's built-ins and what its package.json
 * declares to be installed with it: a devDependency is not installed with it, nor is a package
 * another workspace package happens to bring along.
 */
const undeclaredImports = (tree: Tree): Array<Import> =>
  everyImport(tree).filter(({ file, import: specifier }) => {
    const pkg = packageOf(tree, file)
    if (pkg === undefined) return true
    if (isRelative(specifier)) return !posix.join(posix.dirname(file), specifier).startsWith(`${pkg.dir}/`)
    if (isBuiltin(specifier)) return false
    const name = packageName(specifier)
    return name !== pkg.name && !pkg.declared.has(name)
  })

/** Imports of the HTTP package's archive reader from outside the HTTP package. */
const archiveReaders = (tree: Tree): Array<Import> =>
  everyImport(tree).filter(({ file, import: specifier }) => specifier === ARCHIVE_READER && packageOf(tree, file)?.name !== "@mzk/http")

/**
 * Package → the workspace packages its package.json names, of every kind, the workspace root
 * included: the graph pnpm orders the workspace by, and warns of at every install where it loops.
 * A devDependency is an edge too: the core's tests using the testkit, which is built on the core,
 * is a loop. The tools the tests share (the testkit, the storage conformance suite) are therefore
 * the root's devDependencies, beside vitest, and no package names them for its tests.
 */
const manifestGraph = (tree: Tree): Map<string, Array<string>> => {
  const workspace = new Set([tree.root.name, ...tree.packages.map((pkg) => pkg.name)])
  return new Map([tree.root, ...tree.packages].map(({ name, named }) => [name, [...named].filter((n) => workspace.has(n))]))
}

/**
 * Bins that only a build makes (under `dist/`) or that are missing: pnpm links every workspace
 * package's bins at install, before anything is built, and warns for each package that depends on
 * one it cannot find.
 */
const unbuiltBins = (tree: Tree): Array<string> =>
  tree.packages.flatMap((pkg) => pkg.bins).filter((bin) => !existsSync(posix.join(ROOT, bin)) || bin.split("/").some((part) => IGNORED_FOLDERS.includes(part)))

// ---------------------------------------------------------------------------------------------

const tree = readTree()
const graph = moduleGraph(tree)

/** Each cycle as the path it walks; where its knot holds more nodes, cutting it may not be enough. */
const shown = (found: ReadonlyArray<Cycle>, nodes = "modules") =>
  found.map(({ path, knot }) => `${path.join(" → ")}${knot > path.length - 1 ? ` (one cycle of a knot of ${knot} ${nodes})` : ""}`)

/** The tree with the package.json of `name` naming `dependency` besides what it does. */
const plantedDependency = (name: string, dependency: string): Tree => ({
  ...tree,
  packages: tree.packages.map((pkg) => (pkg.name === name ? { ...pkg, named: new Set([...pkg.named, dependency]) } : pkg))
})

/** The tree with `file` importing `specifier` besides what it does. */
const planted = (file: string, specifier: string): Tree => ({
  ...tree,
  imports: new Map([...tree.imports, [file, [...(tree.imports.get(file) ?? []), specifier]]])
})

/** How `from` would import `to`, as the sources write it (`../kernel/ids.js`). */
const specifierOf = (from: string, to: string) => {
  const path = posix.relative(posix.dirname(from), to).replace(/\.ts$/, ".js")
  return path.startsWith("../") ? path : `./${path}`
}

/** The module a package's `exports` give for `subpath`: where a planted import goes. */
const entryOf = (name: string, subpath = ".") => {
  const pkg = packageNamed(tree, name)!
  return pkg.exports.get(subpath)!.find((path) => tree.imports.has(path))!
}

describe("the workspace's module structure", () => {
  it("reads every package of the workspace and its sources", () => {
    const names = tree.packages.map((pkg) => pkg.name)
    expect(names).toEqual(expect.arrayContaining(["@mzk/core", "@mzk/http", "@mzk/server", "@mzk/proving"]))
    expect(tree.imports.size).toBeGreaterThan(300)
  })

  it("resolves every import of a module of the workspace to its file", () => {
    expect(unresolvedImports(tree)).toEqual([])
  })

  it("has no import cycle, type-only imports included", () => {
    expect(shown(cycles(graph))).toEqual([])
  })

  it("has one row of LAYERS for each package, each naming only packages in rows above it", () => {
    const names = LAYERS.map(([name]) => name)
    expect(tree.packages.map((pkg) => pkg.name).filter((name) => !names.includes(name))).toEqual([])
    for (const [row, [name, below]] of LAYERS.entries()) {
      expect(below.filter((dependency) => !names.slice(0, row).includes(dependency)), name).toEqual([])
    }
  })

  it("imports a workspace package only downward, as LAYERS allows", () => {
    expect(upwardImports(tree)).toEqual([])
    expect(upwardDependencies(tree)).toEqual([])
  })

  it("imports only what each package.json declares, Node's built-ins and the package's own files", () => {
    expect(undeclaredImports(tree)).toEqual([])
  })

  it("leaves reading archives to the HTTP package: nothing else imports @mzk/http/archive", () => {
    expect(archiveReaders(tree)).toEqual([])
  })
})

describe("the workspace's package.json files, as pnpm reads them at install", () => {
  it("name no cycle of packages, devDependencies and the workspace root included", () => {
    const graph = manifestGraph(tree)
    expect(graph.get(tree.root.name)).toEqual(expect.arrayContaining(["@mzk/testkit"]))
    expect(shown(cycles(graph), "packages")).toEqual([])
  })

  it("name bins that exist before a build", () => {
    expect(tree.packages.flatMap((pkg) => pkg.bins)).toEqual(expect.arrayContaining(["packages/server/bin/mzk.js"]))
    expect(unbuiltBins(tree)).toEqual([])
  })
})

describe("the rules fail on what they forbid, planted in a copy of the real tree", () => {
  it("a cycle: a module of the core made to import the module that imports it", () => {
    // A module that imports no other, and one that imports it: the edge planted back makes the
    // only cycle, of the two of them, since the real tree has none.
    const [importer, leaf] = [...graph]
      .filter(([file]) => file.startsWith("packages/core/src/"))
      .flatMap(([file, imports]) => imports.filter((target) => graph.get(target)?.length === 0).map((target) => [file, target] as const))[0]!
    const [first, second] = [importer, leaf].sort()
    expect(shown(cycles(moduleGraph(planted(leaf, specifierOf(leaf, importer)))))).toEqual([`${first} → ${second} → ${first}`])
  })

  it("an upward import: the core importing the HTTP package", () => {
    const file = entryOf("@mzk/core")
    expect(upwardImports(planted(file, "@mzk/http"))).toEqual([{ file, import: "@mzk/http" }])
  })

  it("an undeclared import, and an import that leaves its package", () => {
    const file = entryOf("@mzk/webhooks")
    expect(undeclaredImports(planted(file, "kysely"))).toEqual([{ file, import: "kysely" }])
    expect(undeclaredImports(planted(file, "../../core/src/index.js"))).toEqual([{ file, import: "../../core/src/index.js" }])
  })

  it("a cycle of packages: the core's tests given the testkit, which is built on the core, as a devDependency", () => {
    const found = shown(cycles(manifestGraph(plantedDependency("@mzk/core", "@mzk/testkit"))), "packages")
    expect(found).toHaveLength(1)
    expect(found[0]).toMatch(/^@mzk\/core → @mzk\/testkit → @mzk\/core\b/)
  })

  it("a bin only a build makes", () => {
    const withBuiltBin: Tree = {
      ...tree,
      packages: tree.packages.map((pkg) => (pkg.name === "@mzk/server" ? { ...pkg, bins: ["packages/server/dist/cli.js"] } : pkg))
    }
    expect(unbuiltBins(withBuiltBin)).toEqual(["packages/server/dist/cli.js"])
  })

  it("an unresolved import, and a reader of archives", () => {
    const file = entryOf("@mzk/testkit")
    expect(unresolvedImports(planted(file, "./missing.js"))).toEqual([{ file, import: "./missing.js" }])
    expect(archiveReaders(planted(file, ARCHIVE_READER))).toEqual([{ file, import: ARCHIVE_READER }])
  })
})

// ---------------------------------------------------------------------------------------------
// The core's own rules, on its modules (paths from packages/core/src).

const CORE_SRC = "packages/core/src/"

/** Each module of the core → the modules of the core it imports. */
const core = new Map(
  [...graph]
    .filter(([file]) => file.startsWith(CORE_SRC))
    .map(([file, imports]) => [file.slice(CORE_SRC.length), imports.filter((i) => i.startsWith(CORE_SRC)).map((i) => i.slice(CORE_SRC.length))])
)

const folderOf = (module: string) => posix.dirname(module)

/**
 * Folder → the other folders its modules import. A loop here (events/ importing webhooks/ while
 * webhooks/ imports events/) is a cycle no file-level check sees when the files involved differ.
 */
const folders = new Map<string, Array<string>>()
for (const [module, imports] of core) {
  const targets = folders.get(folderOf(module)) ?? []
  for (const target of imports.map(folderOf)) if (target !== folderOf(module) && !targets.includes(target)) targets.push(target)
  folders.set(folderOf(module), targets)
}

describe("the core's module structure", () => {
  it("has no import cycle", () => {
    expect(core.size).toBeGreaterThan(40)
    expect(shown(cycles(core))).toEqual([])
  })

  it("has no import loop between folders", () => {
    expect(folders.size).toBeGreaterThan(10)
    expect(shown(cycles(folders))).toEqual([])
  })

  it("keeps events/ the outbox only: it imports the kernel and nothing of any feature", () => {
    for (const [module, imports] of core) {
      if (module.startsWith("events/")) expect(imports.filter((i) => !i.startsWith("kernel/") && !i.startsWith("events/")), module).toEqual([])
    }
  })

  it("keeps the shared kernel free of features, and loops free of the composition", () => {
    const features = ["accounts/", "keys/", "events/", "rateLimits/", "webhooks/", "proofs/"]
    for (const [module, imports] of core) {
      if (module.startsWith("kernel/")) expect(imports.filter((i) => !i.startsWith("kernel/")), module).toEqual([])
      if (features.some((f) => module.startsWith(f))) expect(imports.filter((i) => !i.includes("/")), module).toEqual([])
    }
  })
})
