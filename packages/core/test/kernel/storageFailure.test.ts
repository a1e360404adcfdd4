import { describe, expect, it } from "@effect/vitest"
import { logFailure, logStorageFailure, StorageError } from "@mzk/core"
import { Cause, Effect, HashMap, Logger } from "effect"

interface Line {
  readonly message: string
  readonly level: string
  readonly annotations: Record<string, unknown>
  readonly cause: string
}

/** Runs `effect` with a logger that keeps each line: its message, level, annotations and cause. */
const linesOf = (effect: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const lines: Array<Line> = []
    const logger = Logger.make(({ annotations, cause, logLevel, message }) => {
      lines.push({
        message: Array.isArray(message) ? message.map(String).join(" ") : String(message),
        level: logLevel.label,
        annotations: Object.fromEntries(HashMap.toEntries(annotations)),
        cause: Cause.isEmpty(cause) ? "" : Cause.pretty(cause)
      })
    })
    yield* Effect.provide(effect, Logger.replace(Logger.defaultLogger, logger))
    return lines
  })

const sqliteError = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE" })
const full = new StorageError({ message: "an I/O error on the database's disk (SQLITE_IOERR_WRITE)", cause: sqliteError })

describe("storage failures in the log", () => {
  it.effect("one error line: mzk's reason, the database's message and code, and where it happened; never a query's values", () =>
    Effect.gen(function*() {
      const pgError = Object.assign(new Error("cannot execute INSERT in a read-only transaction"), {
        code: "25006",
        detail: "Key (hash)=(5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8) already exists.",
        query: "insert into api_keys …",
        parameters: ["mzk_secret"]
      })
      const lines = yield* linesOf(logStorageFailure("request failed: storage unavailable", new StorageError({ message: "the database is read-only", cause: pgError }), { request_id: "req_1" }))
      expect(lines).toEqual([{
        message: "request failed: storage unavailable",
        level: "ERROR",
        annotations: { event: "storage.failure", reason: "the database is read-only", database_error: pgError.message, database_code: "25006", request_id: "req_1" },
        cause: ""
      }])
      expect(JSON.stringify(lines)).not.toMatch(/5e884898|mzk_secret|insert into/)
    }))

  it.effect("a connection refused on every address (an AggregateError) gives its first error's words", () =>
    Effect.gen(function*() {
      const refused = Object.assign(new AggregateError([Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })], ""), { code: "ECONNREFUSED" })
      const [line] = yield* linesOf(logStorageFailure("readiness: the database check failed", new StorageError({ message: "unreachable", cause: refused })))
      expect(line!.annotations).toMatchObject({ database_error: "connect ECONNREFUSED 127.0.0.1:5432", database_code: "ECONNREFUSED" })
    }))

  it.effect("a loop's failure: a storage failure as above, anything else with its cause at the level asked", () =>
    Effect.gen(function*() {
      const [storage] = yield* linesOf(logFailure("proofs: claim failed", Cause.fail(full)))
      expect(storage).toMatchObject({ level: "ERROR", annotations: { event: "storage.failure", database_code: "SQLITE_IOERR_WRITE" }, cause: "" })
      const [other] = yield* linesOf(logFailure("proof 1 could not be handed back", Cause.die(new Error("boom")), { level: "Warning", annotations: { proof_id: "p" } }))
      expect(other).toMatchObject({ level: "WARN", annotations: { proof_id: "p" }, cause: expect.stringContaining("boom") })
      const [handedBack] = yield* linesOf(logFailure("proof 1 could not be handed back", Cause.fail(full), { level: "Warning" }))
      expect(handedBack!.level).toBe("ERROR")
    }))
})
