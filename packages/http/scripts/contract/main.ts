/**
 * `pnpm gen`: writes the generated types of @mzk/client and @mzk/webhooks from the OpenAPI document
 * of @mzk/http. `pnpm gen --check`: writes nothing, exits 1 naming each file that is stale.
 */
import { openApiDocument } from "../../src/index.js"
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import process from "node:process"
import { fileURLToPath } from "node:url"
import type { Document } from "./emit.js"
import { generateContract } from "./generate.js"

const root = join(dirname(fileURLToPath(import.meta.url)), "../../../..")
const check = process.argv.includes("--check")
// Through JSON, as a client would read the served document: no Effect values in what is read.
const document = JSON.parse(JSON.stringify(openApiDocument)) as Document

let stale = 0
for (const { path, text } of generateContract(document)) {
  const file = join(root, path)
  const current = (() => {
    try {
      return readFileSync(file, "utf8")
    } catch {
      return undefined
    }
  })()
  if (current === text) continue
  if (check) {
    stale++
    process.stderr.write(`${path} is stale: run pnpm gen\n`)
  } else {
    writeFileSync(file, text)
    process.stdout.write(`wrote ${path}\n`)
  }
}
process.exit(stale === 0 ? 0 : 1)
