// A prebuilt upload goes to artifact storage as it arrives: the server, in its own process, holds
// a bounded amount of it whatever the part's size. Measured from the process's /proc status (peak
// resident memory), not from time.
import { it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { memoryOf, resetPeak, sendBigUpload } from "./bigUpload.js"
import { createAccount, serveProcess, tempSqlite } from "../processes.js"

const MiB = 1024 * 1024
/** Far beyond what a buffered upload could hide: the part is held once in a Buffer, then copied. */
const PART_BYTES = 200 * MiB
/** The growth allowed: chunks in flight, the parser's buffers, SQLite's page cache, garbage not yet collected. */
const GROWTH_BOUND = 100 * MiB

describe("a large prebuilt upload", () => {
  it.scopedLive("is stored chunk by chunk as it arrives: the server's peak memory grows far less than the part", () =>
    Effect.gen(function*() {
      const { database, file } = yield* tempSqlite("streamed-upload")
      const { api_key } = createAccount(database, "Big uploads")
      // The API only: a build would read the artifacts back, which is not what this measures.
      const server = yield* serveProcess(database, { args: ["--no-workers", "--max-upload-size", "1GiB"] })
      const pid = server.child.pid!
      // A small upload first, so the path's code is loaded and compiled before the baseline.
      const warm = yield* Effect.promise(() => sendBigUpload(server.baseUrl, api_key, { name: "warm-up", zkeyBytes: 2 * MiB }))
      expect(warm.status, warm.body).toBe(202)
      const before = memoryOf(pid)
      const reset = resetPeak(pid)

      const sent = yield* Effect.promise(() => sendBigUpload(server.baseUrl, api_key, { name: "big", zkeyBytes: PART_BYTES }))
      expect(sent.status, sent.body).toBe(202)
      expect(JSON.parse(sent.body)).toMatchObject({ name: "big", status: "compiling" })

      const after = memoryOf(pid)
      // Without the reset the peak is the process's whole life's, which only overstates the growth.
      const growth = after.peak - (reset ? before.rss : Math.min(before.rss, before.peak))
      expect(growth, `peak RSS grew by ${(growth / MiB).toFixed(1)} MiB for a ${PART_BYTES / MiB} MiB part`).toBeLessThan(GROWTH_BOUND)

      // Stored whole and exactly: the artifact row under the digest of what was sent, with all its chunks.
      const db = new Database(file, { readonly: true, fileMustExist: true })
      yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
      const row = db.prepare("select size, chunks from artifacts where digest = ?").get(sent.zkeyDigest) as
        | { size: number; chunks: number }
        | undefined
      expect(row).toEqual({ size: PART_BYTES, chunks: PART_BYTES / MiB })
      const stored = db.prepare("select count(*) as n, sum(length(data)) as bytes from artifact_chunks where digest = ?").get(sent.zkeyDigest)
      expect(stored).toEqual({ n: PART_BYTES / MiB, bytes: PART_BYTES })
      // A refused upload (its name is taken) stores nothing of what it streamed.
      const refused = yield* Effect.promise(() => sendBigUpload(server.baseUrl, api_key, { name: "big", zkeyBytes: 3 * MiB + 5 }))
      expect(refused.status, refused.body).toBe(409)
      expect(db.prepare("select count(*) as n from artifacts where digest = ?").get(refused.zkeyDigest)).toEqual({ n: 0 })
      // Nothing left staged: every staging area was published or dropped.
      expect(db.prepare("select count(*) as n from artifact_chunks where digest like 'staging:%'").get()).toEqual({ n: 0 })
    }), 600_000)
})
