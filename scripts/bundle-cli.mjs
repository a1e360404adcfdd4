#!/usr/bin/env node
// Bundles the `mzk` CLI (packages/server/src/cli.ts) for `pnpm mzk`: run at install (the root
// `postinstall`) and again by scripts/mzk.mjs whenever a source it was made from has changed.
//
// Why a bundle and not tsx or tsc's dist/: a start from the TypeScript sources through tsx took
// 11–21 s on a busy machine, and even built JavaScript reads hundreds of modules (effect alone is
// several hundred files) before the first line of help. One file per command, read at once, is
// what makes `mzk --help` answer in a fraction of a second (docs/performance.md, "CLI start-up").
//
// What goes in: the workspace's own TypeScript (@mzk/*, through the `@mzk/source` condition, as
// tsx would read it), Effect's pure-JavaScript packages and the few others a start reads (`BUNDLED`).
// What stays out, imported from where pnpm installed it: every other package (drivers, native
// addons, snarkjs, circom2, prom-client), so a native module or a package that reads files beside
// itself works as it does unbundled. The code is split at each `import()`, so a command reads only
// the chunks it needs.
//
// This bundle is for running mzk from this checkout; the published @mzk/server ships tsc's dist/.
import { randomBytes } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, sep } from "node:path"
import process from "node:process"
import { fileURLToPath, pathToFileURL } from "node:url"
import { OPTIONAL_PACKAGES } from "../packages/proving/src/optionalPackages.mjs"

const root = dirname(dirname(fileURLToPath(import.meta.url)))
/** Where bundles live: ignored by git, and gone with node_modules (install makes a fresh one). */
export const OUT = join(root, "node_modules", ".mzk-cli")
/** Which bundle is current, and what it was made from: written last, by rename, so a reader never sees half a build. */
export const CURRENT = join(OUT, "current.json")
const ENTRY = join(root, "packages", "server", "src", "cli.ts")

/**
 * Bundled rather than imported from node_modules: pure JavaScript whose many small files are the
 * start-up cost (kysely's ESM build is over a hundred modules, yaml's dozens; @effect/cli imports
 * yaml and toml at its start). fast-check too: effect re-exports it whole (`export *`), which only a
 * bundle can leave out when unused. Packages with native addons, or that find files or workers
 * beside themselves (snarkjs, circom2, the Noir packages), stay real imports.
 */
const BUNDLED = new Set(["effect", "fast-check", "pure-rand", "kysely", "yaml", "toml", "@noble/hashes", "proxy-addr", "ipaddr.js", "forwarded"])
const bundled = (name) => BUNDLED.has(name) || name.startsWith("@effect/") || (name.startsWith("@mzk/") && name !== "@mzk/prover-native")
const packageName = (specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")
const isBare = (specifier) => !/^(\.|\/|node:|[a-zA-Z]:)/.test(specifier)

/**
 * Every other package stays a real import of the file its own package resolves to, wherever the
 * bundle is. Neither those nor the workspace's modules are run for their side effects (none is
 * imported for them alone): a module whose exports a command never uses is left out of it, so the
 * help does not load the HTTP stack because a setting's check lives in @mzk/http.
 */
const externals = {
  name: "mzk-externals",
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.mzkResolving === true || args.kind === "entry-point") return undefined
      const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { mzkResolving: true } })
      // An optional package this checkout lacks stays a bare import: mzk says what to install when a feature needs it.
      if (resolved.errors.length > 0 && isBare(args.path) && packageName(args.path) in OPTIONAL_PACKAGES) return { path: args.path, external: true }
      if (resolved.errors.length > 0) return { errors: resolved.errors }
      // Built-ins (`fs`, `node:fs`) come back external and unresolved: leave them as written.
      if (resolved.external) return { path: args.path, external: true }
      const inNodeModules = resolved.path.includes(`${sep}node_modules${sep}`)
      if (!inNodeModules) return { path: resolved.path, sideEffects: false }
      if (isBare(args.path) && !bundled(packageName(args.path))) return { path: pathToFileURL(resolved.path).href, external: true, sideEffects: false }
      return undefined
    })
  }
}

/**
 * @effect/cli reads config files in YAML, TOML and INI (`Options.file…`, which mzk does not use),
 * and imports their parsers at its start: 150 KB of the start's JavaScript. Each is replaced by a
 * module that loads the real parser, from where it was resolved, the first time it parses.
 */
const LAZY_PARSERS = /^(yaml|toml|ini)$/
const lazyParsers = {
  name: "mzk-lazy-parsers",
  setup(build) {
    build.onResolve({ filter: LAZY_PARSERS }, async (args) => {
      if (args.pluginData?.mzkLazy === true) return undefined
      const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { mzkLazy: true, mzkResolving: true } })
      if (resolved.errors.length > 0) return { errors: resolved.errors }
      return { path: resolved.path, namespace: "mzk-lazy-parser" }
    })
    build.onLoad({ filter: /.*/, namespace: "mzk-lazy-parser" }, (args) => ({
      // The path through a variable: a literal would be bundled again.
      contents: `const path=${JSON.stringify(args.path)};let parser;export const parse=(...args)=>(parser??=require(path)).parse(...args);`,
      loader: "js"
    }))
  }
}

/**
 * The workspace's modules that find files beside themselves (`new URL("./proveThread.mjs",
 * import.meta.url)`, the circuits' catalog, circom's runtime) keep their own location: their
 * `import.meta.url` is written in as the source file's URL, not the bundle's.
 */
const ownLocation = {
  name: "mzk-own-location",
  setup(build) {
    build.onLoad({ filter: /\.(m?ts|m?js)$/ }, (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined
      const text = readFileSync(args.path, "utf8")
      if (!text.includes("import.meta.url")) return undefined
      return {
        contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
        loader: /\.m?ts$/.test(args.path) ? "ts" : "js"
      }
    })
  }
}

/** The current bundle's entry file, or undefined when there is none or a source is newer than it. */
export const freshBundle = () => {
  let current
  try {
    current = JSON.parse(readFileSync(CURRENT, "utf8"))
  } catch {
    return undefined
  }
  const entry = join(OUT, current.dir, current.entry)
  try {
    const built = statSync(entry).mtimeMs
    return current.inputs.every((input) => statSync(join(root, input)).mtimeMs <= built) ? entry : undefined
  } catch {
    // A source was deleted or renamed: the bundle was made from something else.
    return undefined
  }
}

/** Builds a fresh bundle and makes it current; returns its folder. Safe to run from several processes at once. */
export const bundle = async () => {
  const { build } = await import("esbuild")
  mkdirSync(OUT, { recursive: true })
  const dir = join(OUT, `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`)
  const result = await build({
    absWorkingDir: root,
    entryPoints: { cli: ENTRY },
    outdir: dir,
    bundle: true,
    splitting: true,
    format: "esm",
    // `.mjs`: outside any package's scope (node_modules ends the search for a package.json), a `.js`
    // file would be compiled twice, once to find out it is not CommonJS.
    outExtension: { ".js": ".mjs" },
    // Compiling the source is most of a start's cost, and it grows with the text's length.
    minify: true,
    platform: "node",
    target: "node20",
    // The CommonJS packages bundled (kysely's, yaml's dependencies) require Node's built-ins, which an
    // ES module can only do through a require of its own.
    banner: { js: "import{createRequire as __mzkRequire}from\"node:module\";const require=__mzkRequire(import.meta.url);" },
    conditions: ["@mzk/source"],
    // Stack traces (`--log-level debug`, scripts/mzk.mjs) name the sources.
    sourcemap: "linked",
    metafile: true,
    logLevel: "warning",
    plugins: [lazyParsers, externals, ownLocation]
  })
  writeFileSync(join(dir, "meta.json"), JSON.stringify(result.metafile))
  // What a change to makes this bundle stale: the workspace's files it read, and the lockfile (a dependency's version).
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes("node_modules/") && !input.startsWith("file:"))
    .map((input) => relative(root, join(root, input)))
  const current = { dir: relative(OUT, dir), entry: "cli.mjs", inputs: [...inputs, "pnpm-lock.yaml", "scripts/bundle-cli.mjs"] }
  const temporary = `${CURRENT}.${process.pid}.${randomBytes(4).toString("hex")}`
  writeFileSync(temporary, JSON.stringify(current))
  renameSync(temporary, CURRENT)
  removeOldBundles(current.dir)
  return dir
}

/** Bundles replaced more than an hour ago: a process started from one has long since read its chunks. */
const removeOldBundles = (keep) => {
  const hourAgo = Date.now() - 3_600_000
  for (const name of readdirSync(OUT)) {
    const path = join(OUT, name)
    if (name === keep || name === "current.json" || !statSync(path).isDirectory()) continue
    if (statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now()
  try {
    const dir = await bundle()
    process.stdout.write(`bundled the mzk CLI into ${relative(root, dir)} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  } catch (error) {
    // At install, a bundle that cannot be made must not fail the install: `pnpm mzk` tries again
    // and shows why, and everything else (tests, the library) does not use it.
    process.stderr.write(`mzk: the CLI was not bundled (${error instanceof Error ? error.message : String(error)}); pnpm mzk will try again\n`)
    if (!process.argv.includes("--at-install")) process.exitCode = 1
  }
}
