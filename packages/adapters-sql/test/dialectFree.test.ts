import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src", import.meta.url))

const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/**
 * The SQL store is written once: where databases differ it asks its `SqlDialect`, and what a
 * database does its own way lives in that database's package. So no source here names a
 * database, its driver, or a clause only some databases have.
 */
describe("adapters-sql names no database", () => {
  it("has no database name, driver or dialect-only clause in src", () => {
    const named = /sqlite|postgres|\bpg\b|better-sqlite3|forUpdate|skipLocked|for update|skip locked|pg_notify|\bnotify\b|\blisten\b/i
    const found = sources(src).flatMap((file) =>
      readFileSync(file, "utf8").split("\n").flatMap((line, i) =>
        named.test(line) ? [`${relative(src, file)}:${i + 1}: ${line.trim()}`] : []
      )
    )
    expect(found).toEqual([])
  })
})
