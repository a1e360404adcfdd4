#!/usr/bin/env node
// `pnpm mzk …`: runs the CLI's bundle (scripts/bundle-cli.mjs, made at install). A bundle older
// than any file it was made from is made again first, so an edited source is what runs; checking
// costs one stat per workspace source the bundle holds (a few milliseconds).
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import process from "node:process"
import { pathToFileURL } from "node:url"
import { CURRENT, OUT } from "./bundle-cli.mjs"

const root = join(OUT, "..", "..")

/** The current bundle's entry file, or undefined when there is none or a source is newer than it. */
const fresh = () => {
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

const entry = fresh() ?? join(await (await import("./bundle-cli.mjs")).bundle(), "cli.mjs")
// The bundle is minified: a stack trace (`--log-level debug`) names the sources through its maps.
// Only then, as reading the maps costs more than the rest of a start.
if (process.argv.some((arg) => arg.startsWith("--log-level"))) process.setSourceMapsEnabled(true)
await import(pathToFileURL(entry).href)
