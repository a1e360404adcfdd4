import { SqliteStore } from "@mzk/adapters-sqlite"
import { storageConformance } from "@mzk/storage-conformance"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "mzk-sqlite-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

storageConformance("sqlite (temporary file)", SqliteStore({ filename: join(dir, "conformance.db") }))
