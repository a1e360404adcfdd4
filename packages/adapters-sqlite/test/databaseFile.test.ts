import { migrate, sqlStorage } from "@mzk/adapters-sql"
import { openSqlite } from "@mzk/adapters-sqlite"
import { StorageHealth } from "@mzk/core"
import { describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect, Exit } from "effect"
import { existsSync, mkdtempSync, renameSync, rmSync, unlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A copy of `file` as SQLite's online backup makes it, its reading connection closed after. */
const backupOf = async (file: string, to: string) => {
  const source = new Database(file, { readonly: true })
  try {
    await source.backup(to)
  } finally {
    source.close()
  }
}

const REPLACED = "the database file was replaced or deleted since mzk opened it; restart mzk to open the file now at its path"

/** A SQLite file in a fresh folder, removed with the scope. */
const tempFile = Effect.map(
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "mzk-file-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ),
  (dir) => join(dir, "mzk.db")
)

/** `file` opened and migrated: its connection, its readiness check and two statements on it. */
const onFile = (file: string) => Effect.gen(function*() {
  const conn = yield* openSqlite({ filename: file })
  yield* migrate(conn)
  const health = Context.get(sqlStorage(conn), StorageHealth)
  const account = (id: string) => conn.execute((db) => db.insertInto("accounts").values({ id, name: id, created_at: "2026-11-26T00:00:00.000Z" }))
  const count = conn.first((db) => db.selectFrom("accounts").select((eb) => eb.fn.countAll<number>().as("n")))
  return { conn, health, account, count }
})

describe("the SQLite file under the connection", () => {
  it.scoped("deleted: every write is refused with the reason, reads go on, readiness names it", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      const { account, conn, count, health } = yield* onFile(file)
      yield* account("acct_before")
      expect(yield* health.check).toEqual({ pendingMigrations: [] })

      unlinkSync(file)
      for (const write of [account("acct_alone"), conn.transaction(account("acct_in_transaction"))]) {
        const refused = yield* Effect.exit(write)
        expect(refused).toMatchObject(Exit.fail({ _tag: "StorageError", message: REPLACED }))
      }
      expect(yield* count).toMatchObject({ value: { n: 1 } })
      const status = yield* health.check
      expect(status.pendingMigrations).toEqual([])
      expect(status.writeFailure?.message).toBe(REPLACED)
      // SQLite did not bring the file back: nothing was written under the path.
      expect(existsSync(file)).toBe(false)
    }))

  it.scoped("replaced by another file (a restored backup): refused just the same, and once closed, a new connection opens the file now there", () =>
    Effect.gen(function*() {
      const file = yield* tempFile
      // The first connection, closed (as a restart closes it) before the file now at the path is opened.
      yield* Effect.scoped(Effect.gen(function*() {
        const { account, health } = yield* onFile(file)
        yield* account("acct_in_backup")
        yield* Effect.promise(() => backupOf(file, `${file}.backup`))
        yield* account("acct_after_backup")
        renameSync(`${file}.backup`, file)
        expect(yield* Effect.exit(account("acct_refused"))).toMatchObject(Exit.fail({ message: REPLACED }))
        expect((yield* health.check).writeFailure?.message).toBe(REPLACED)
      }))
      // SQLite leaves the old file's write-ahead log at the path when its file has moved: the
      // restore removes it (docs/deployment.md), or its frames would be laid over the backup.
      rmSync(`${file}-wal`, { force: true })
      rmSync(`${file}-shm`, { force: true })

      const { account, conn, health } = yield* onFile(file)
      const ids = yield* conn.rows((db) => db.selectFrom("accounts").select("id").orderBy("id"))
      expect(ids.map((row) => row.id)).toEqual(["acct_in_backup"])
      yield* account("acct_reopened")
      expect(yield* health.check).toEqual({ pendingMigrations: [] })
    }))

  it.scoped("in memory: nothing to check, readiness writes its row", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      yield* migrate(conn)
      const health = Context.get(sqlStorage(conn), StorageHealth)
      expect(yield* health.check).toEqual({ pendingMigrations: [] })
      expect(yield* health.check).toEqual({ pendingMigrations: [] })
      expect(yield* conn.rows((db) => db.selectFrom("readiness_probe").select("id"))).toEqual([{ id: 1 }])
    }))
})
