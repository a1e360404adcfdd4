import { openPostgres, PostgresStore, PostgresWakeups } from "@mzk/adapters-postgres"
import { ProofWakeup } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schedule } from "effect"
import { sql } from "kysely"
import pg from "pg"
import { adminUrl, describePostgres, freshDatabaseUrl } from "./freshDatabase.js"

/** One statement as the server's administrator, on a connection of its own. */
const admin = (statement: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      return (await client.query(statement)).rows
    } finally {
      await client.end()
    }
  })

/** Until `rows` finds a row (a state another connection reaches soon). */
const whenFound = (query: string) =>
  Effect.retry(Effect.flatMap(admin(query), (rows) => rows.length > 0 ? Effect.void : Effect.fail("not yet")), {
    schedule: Schedule.spaced("20 millis"),
    times: 500
  })

/** Ends every connection to the database, as a restart or a failover does. */
const terminateAll = (name: string) => admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`)

/** Errors that reached the process's last line of defence while `effect` ran. */
const uncaughtDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const seen: Array<unknown> = []
      const listener = (error: unknown) => seen.push(error)
      process.prependListener("uncaughtException", listener)
      return { seen, listener }
    }),
    ({ seen }) => Effect.map(effect, (value) => ({ value, uncaught: seen })),
    ({ listener }) => Effect.sync(() => process.removeListener("uncaughtException", listener))
  )

describePostgres("Postgres connections the server ends", () => {
  it.scopedLive("a connection ended during a query fails that query, not the process, and the pool serves queries again on new ones", () =>
    Effect.gen(function*() {
      const { name, url } = yield* freshDatabaseUrl
      const conn = yield* openPostgres({ connectionString: url })
      const { value: failure, uncaught } = yield* uncaughtDuring(Effect.promise(() =>
        // Held out of the pool, as a transaction holds it: pg-pool watches only idle connections.
        conn.db.connection().execute(async (db) => {
          const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid
          const slow = sql`select pg_sleep(30)`.execute(db).then(() => "answered", (error: Error) => error.message)
          await Effect.runPromise(whenFound(`select 1 from pg_stat_activity where pid = ${pid} and query like '%pg_sleep%'`))
          await Effect.runPromise(terminateAll(name))
          return await slow
        })))
      expect(failure).toMatch(/terminat/i)
      expect(uncaught).toEqual([])
      // The server's "terminating" message can reach the query before the socket closes, so the
      // connection may go back to the pool once and fail one more query before it is discarded.
      const after = yield* conn.rows((db) => db.selectNoFrom(sql<number>`1`.as("one"))).pipe(Effect.retry({ times: 1 }))
      expect(after).toEqual([{ one: 1 }])
    }), 60_000)

  it.scopedLive("the LISTEN connection ended at any moment is re-opened, and wakes the loops again", () =>
    Effect.gen(function*() {
      const { name, url } = yield* freshDatabaseUrl
      const { value: woken, uncaught } = yield* uncaughtDuring(Effect.gen(function*() {
        const context = yield* Layer.build(
          PostgresWakeups({ connectionString: url }).pipe(Layer.provideMerge(testCore(PostgresStore({ connectionString: url }))))
        )
        const whenListening = whenFound(`select 1 from pg_stat_activity where datname = '${name}' and query like 'listen mzk_recoveries'`)
        // Ended while it subscribes, then once it holds: each time it comes back.
        yield* terminateAll(name)
        yield* Effect.sleep("20 millis")
        yield* terminateAll(name)
        for (let round = 0; round < 3; round++) {
          yield* whenListening
          yield* terminateAll(name)
        }
        yield* whenListening
        const wake = yield* Effect.fork(Context.get(context, ProofWakeup).take)
        const other = new pg.Client({ connectionString: url })
        yield* Effect.promise(() => other.connect().then(() => other.query("select pg_notify('mzk_proofs', '')")).finally(() => other.end()))
        return yield* wake.await.pipe(Effect.timeout("5 seconds"))
      }))
      expect(woken._tag).toBe("Success")
      expect(uncaught).toEqual([])
    }), 60_000)
})
