#!/usr/bin/env node
// `pnpm mzk …`: runs the CLI's bundle (scripts/bundle-cli.mjs, made at install). A bundle older
// than any file it was made from is made again first, so an edited source is what runs; checking
// costs one stat per workspace source the bundle holds (a few milliseconds).
import { Buffer } from "node:buffer"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { dirname, join } from "node:path"
import process from "node:process"
import { pathToFileURL } from "node:url"
import { bundle, freshBundle } from "./bundle-cli.mjs"

const entry = freshBundle() ?? join(await bundle(), "cli.mjs")

/**
 * Help (`mzk`, `mzk --help`, `mzk keys list --help`) depends only on the bundle, the words asked
 * for, whether it is coloured and the core count it quotes; yet rendering it means starting Effect
 * and @effect/cli, most of a start's cost. So the first time a help is asked for, what the CLI
 * prints is kept beside the bundle, and printed from there afterwards; a new bundle (any source
 * changed) starts with none. Anything else on the line (a config file, other flags) runs the CLI.
 */
const helpFile = (() => {
  const args = process.argv.slice(2)
  const help = args.length === 0 || (args.length <= 3 && /^(--help|-h)$/.test(args.at(-1)) && args.slice(0, -1).every((arg) => /^[a-z]+$/.test(arg)))
  if (!help || process.env.MZK_CONFIG !== undefined) return undefined
  const colour = process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === ""
  const key = createHash("sha256").update(JSON.stringify({ args, colour, cores: availableParallelism() })).digest("hex").slice(0, 16)
  return join(dirname(entry), "help", `${key}.txt`)
})()
if (helpFile !== undefined) {
  try {
    process.stdout.write(readFileSync(helpFile))
    process.exit(0)
  } catch {
    // Not kept yet: the CLI renders it, and what it prints is kept if it ends well.
    const printed = []
    const write = process.stdout.write.bind(process.stdout)
    process.stdout.write = (chunk, ...rest) => {
      printed.push(Buffer.from(chunk))
      return write(chunk, ...rest)
    }
    process.on("exit", (code) => {
      if (code !== 0 || printed.length === 0) return
      try {
        mkdirSync(dirname(helpFile), { recursive: true })
        const temporary = `${helpFile}.${process.pid}`
        writeFileSync(temporary, Buffer.concat(printed))
        renameSync(temporary, helpFile)
      } catch {
        // A read-only install: help is rendered each time.
      }
    })
  }
}
// The bundle is minified: a stack trace (`--log-level debug`) names the sources through its maps.
// Only then, as reading the maps costs more than the rest of a start.
if (process.argv.some((arg) => arg.startsWith("--log-level"))) process.setSourceMapsEnabled(true)
await import(pathToFileURL(entry).href)
