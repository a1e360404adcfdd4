import { migrate } from "@mzk/adapters-sql"
import { openSqlite, SqliteStore } from "@mzk/adapters-sqlite"
import { Accounts } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

describe("SQLite store", () => {
  it.scoped("migrate applies everything once; a second migrate does nothing", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      const first = yield* migrate(conn)
      expect(first.applied.length).toBeGreaterThan(0)
      expect((yield* migrate(conn)).applied).toEqual([])
      const journal = yield* conn.query((db) => db.selectFrom("pragma_journal_mode" as never).selectAll().execute())
      expect(journal).toEqual([{ journal_mode: "memory" }])
    }))

  it.effect("data survives closing and reopening the file (WAL mode on disk)", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-reopen-"))
      const filename = join(dir, "nested", "mzk.db")
      const layer = (seed: number) => testCore(SqliteStore({ filename }), { seed })
      const account = yield* Effect.scoped(Effect.flatMap(Accounts, (a) => a.create({ name: "Durable" })).pipe(Effect.provide(layer(1))))
      const found = yield* Effect.flatMap(Accounts, (a) => a.get(account.id)).pipe(Effect.provide(layer(2)))
      expect(found).toEqual(Option.some(account))
      const mode = yield* Effect.scoped(Effect.flatMap(openSqlite({ filename }), (conn) =>
        conn.query((db) => db.selectFrom("pragma_journal_mode" as never).selectAll().execute())))
      expect(mode).toEqual([{ journal_mode: "wal" }])
      rmSync(dir, { recursive: true, force: true })
    }))
})
