import { migrate } from "@mzk/adapters-sql"
import { openSqlite } from "@mzk/adapters-sqlite"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"

const connection = Effect.gen(function*() {
  const conn = yield* openSqlite({ filename: ":memory:" })
  yield* migrate(conn)
  yield* conn.execute((db) => db.insertInto("accounts").values({ id: "acct_1", name: "one", created_at: "2026-11-23T00:00:00.000Z" }))
  return conn
})

const key = (id: string, revoked: string | null) => ({
  id,
  account_id: "acct_1",
  name: id,
  description: null,
  prefix: "mzk_abcdef",
  scopes: "[]",
  hash: `hash-${id}`,
  created_at: "2026-11-23T00:00:00.000Z",
  last_used_at: null,
  revoked_at: revoked
})

describe("statements built once and run with values", () => {
  it.scoped("bind each run's values by name and keep the statement's own constants", () =>
    Effect.gen(function*() {
      const conn = yield* connection
      const insert = conn.statement((db, $: { id: string; revoked_at: string | null }) =>
        db.insertInto("api_keys").values({ ...key("", null), id: $.id, name: $.id, hash: $.id, revoked_at: $.revoked_at })
      )
      const active = conn.statement((db, $: { account: string }) =>
        db.selectFrom("api_keys").select("id").where("account_id", "=", $.account).where("revoked_at", "is", null)
          .where("prefix", "=", "mzk_abcdef").orderBy("id")
      )
      yield* insert.execute({ id: "key_a", revoked_at: null })
      yield* insert.execute({ id: "key_b", revoked_at: "2026-11-23T00:00:01.000Z" })
      yield* insert.execute({ id: "key_c", revoked_at: null })
      expect(yield* active.rows({ account: "acct_1" })).toEqual([{ id: "key_a" }, { id: "key_c" }])
      expect(yield* active.first({ account: "acct_2" })).toEqual(Option.none())
      const revoke = conn.statement((db, $: { id: string; at: string }) =>
        db.updateTable("api_keys").set({ revoked_at: $.at }).where("id", "=", $.id).where("revoked_at", "is", null)
      )
      expect(yield* revoke.affected({ id: "key_a", at: "2026-11-23T00:00:02.000Z" })).toBe(1)
      expect(yield* revoke.affected({ id: "key_a", at: "2026-11-23T00:00:03.000Z" })).toBe(0)
      expect(yield* active.rows({ account: "acct_1" })).toEqual([{ id: "key_c" }])
    }))

  it.scoped("join the caller's transaction and roll back with it", () =>
    Effect.gen(function*() {
      const conn = yield* connection
      const insert = conn.statement((db, $: { id: string }) => db.insertInto("api_keys").values({ ...key("", null), id: $.id, hash: $.id }))
      const count = conn.statement((db, $: { account: string }) =>
        db.selectFrom("api_keys").select((eb) => eb.fn.countAll<number>().as("n")).where("account_id", "=", $.account)
      )
      const failed = yield* Effect.exit(conn.transaction(Effect.gen(function*() {
        yield* insert.execute({ id: "key_a" })
        expect(yield* count.rows({ account: "acct_1" })).toEqual([{ n: 1 }])
        return yield* Effect.fail("undo")
      })))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* count.rows({ account: "acct_1" })).toEqual([{ n: 0 }])
    }))

  it.scoped("refuse a placeholder used as a value while the statement is built", () =>
    Effect.gen(function*() {
      const conn = yield* connection
      expect(() =>
        conn.statement((db, $: { limit: number }) => db.selectFrom("api_keys").selectAll().limit($.limit + 1))
      ).toThrow(/placeholder/)
    }))
})
