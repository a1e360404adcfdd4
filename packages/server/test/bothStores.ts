import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient } from "@mzk/testkit"
import { Effect, Redacted, type Scope } from "effect"
import { freshDatabaseUrl } from "@mzk/adapters-postgres/testing"
import type { DatabaseTarget } from "../src/database.js"
import type { ServeOptions } from "../src/mzk.js"
import { startServer } from "./realServer.js"

export { describePostgres } from "@mzk/adapters-postgres/testing"

/** The stores a behaviour must agree on: SQLite in memory, and Postgres in a fresh database dropped after. */
export const STORES: ReadonlyArray<readonly [string, Effect.Effect<DatabaseTarget, unknown, Scope.Scope>]> = [
  ["SQLite", Effect.succeed({ kind: "sqlite", filename: ":memory:" })],
  ["Postgres", Effect.map(freshDatabaseUrl, ({ url }): DatabaseTarget => ({ kind: "postgres", url }))]
]

export interface Reply {
  readonly status: number
  readonly requestId: string | null
  readonly json: any
}

/** mzk on `database` over a real port (`options` over the defaults), with one account and its key; `call` sends JSON with that key. */
export const serverWithKey = (database: Effect.Effect<DatabaseTarget, unknown, Scope.Scope>, options: Partial<ServeOptions> = {}) =>
  Effect.gen(function*() {
    const { baseUrl, context } = yield* startServer({ database: yield* database, allowInsecureWebhooks: true, ...options })
    const key = yield* Effect.gen(function*() {
      const account = yield* (yield* Accounts).create({ name: "Stores" })
      return Redacted.value((yield* (yield* ApiKeys).create(account.id, { name: "k" })).secret)
    }).pipe(Effect.provide(context))
    const client = makeHttpClient(baseUrl, { token: key })
    const call = (method: string, path: string, body?: unknown) =>
      Effect.promise(async (): Promise<Reply> => {
        const reply = await client.send(method, path, { body })
        return { status: reply.status, requestId: reply.headers.get("request-id"), json: reply.json }
      })
    return { baseUrl, key, call }
  })

/** A 400 `invalid_request` in the envelope whose `details` name `path`. */
export const expectRefused = (what: string, reply: Reply, path: string) => {
  if (reply.status !== 400 || reply.json?.error?.code !== "invalid_request") {
    // A wrongly accepted create answers with its secret; test output need not show it.
    const shown = JSON.stringify(reply.json).replace(/mzk_[0-9A-Za-z]{40,}/g, "mzk_…").replace(/whsec_[^"]+/g, "whsec_…")
    throw new Error(`${what}: expected 400 invalid_request, got ${reply.status} ${shown}`)
  }
  if (reply.json.error.request_id !== reply.requestId) throw new Error(`${what}: request id differs`)
  const paths = (reply.json.error.details ?? []).map((d: { path: string }) => d.path)
  if (!paths.includes(path)) throw new Error(`${what}: details ${JSON.stringify(paths)} do not name ${path}`)
}
