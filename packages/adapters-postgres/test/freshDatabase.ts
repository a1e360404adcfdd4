import { PostgresStore } from "@mzk/adapters-postgres"
import { StorageError } from "@mzk/core"
import { Effect, Layer } from "effect"
import pg from "pg"
import { describe } from "vitest"

/**
 * Postgres tests run against a real server: by default the one on 127.0.0.1:5432 (user postgres,
 * trust auth), or MZK_TEST_POSTGRES_URL. Each run gets a database of its own, dropped afterwards.
 */
export const adminUrl = process.env.MZK_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const probe = async (): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 })
  try {
    await client.connect()
    await client.query("select 1")
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  } finally {
    await client.end().catch(() => undefined)
  }
}

const unreachable = await probe()
if (unreachable !== undefined && process.env.CI !== undefined && process.env.CI !== "false") {
  throw new Error(`PostgreSQL is required in CI and is not reachable at ${adminUrl}: ${unreachable}`)
}
if (unreachable !== undefined) {
  console.warn(
    `Skipping PostgreSQL tests: no server at ${adminUrl} (${unreachable}). ` +
      "Start one (pg_ctlcluster --skip-systemctl-redirect 15 main start) or set MZK_TEST_POSTGRES_URL to enable them."
  )
}

/** `describe` when PostgreSQL is reachable, a visible skip otherwise. */
export const describePostgres = unreachable === undefined ? describe : describe.skip
export const postgresAvailable = unreachable === undefined

const admin = <A>(run: (client: pg.Client) => Promise<A>) =>
  Effect.tryPromise({
    try: async () => {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        return await run(client)
      } finally {
        await client.end()
      }
    },
    catch: (cause) => new StorageError({ message: "PostgreSQL admin statement failed", cause })
  })

/** A new, empty database for this run; dropped (even with open connections) when the scope closes. */
export const freshDatabaseUrl = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `mzk_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`
    yield* admin((client) => client.query(`create database ${name}`))
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return { name, url: url.toString() }
  }),
  ({ name }) => admin((client) => client.query(`drop database if exists ${name} with (force)`)).pipe(Effect.orDie)
)

/** The Postgres store on a fresh database. */
export const FreshPostgresStore = Layer.scopedContext(Effect.gen(function*() {
  const { url } = yield* freshDatabaseUrl
  // Built in the same scope after the database, so the pool closes before the drop.
  return yield* Layer.build(PostgresStore({ connectionString: url, poolSize: 20 }))
}))
