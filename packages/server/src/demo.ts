/**
 * A tour of the core on the embedded SQLite store, until the HTTP server exists: creates an
 * account and a key, authenticates with it, meters a proof request, revokes the key, and shows
 * the events that were recorded. Run with `pnpm demo [path/to/db]`.
 */
import { SqliteStore } from "@mzk/adapters-sqlite"
import { Accounts, ApiKeys, authenticate, CoreServices, EventsRepo, RateLimits, SessionAuthenticator } from "@mzk/core"
import { Effect, Layer, Redacted } from "effect"
import { NodeEntropy } from "./entropy.js"

const filename = process.argv[2] ?? "./data/mzk.db"

const program = Effect.gen(function*() {
  const account = yield* (yield* Accounts).create({ name: "Demo Ltd" })
  console.log(`account  ${account.id}`)
  const keys = yield* ApiKeys
  const created = yield* keys.create(account.id, { name: "demo-key", description: "made by pnpm demo" })
  console.log(`api key  ${created.api_key.id}  ${Redacted.value(created.secret)}  (shown once; stored as SHA-256)`)
  const principal = yield* authenticate(created.secret)
  console.log(`auth     ${principal.via.kind} of ${principal.account_id}, scopes ${principal.scopes.join(" ")}`)
  const windows = yield* (yield* RateLimits).admitProofRequest(principal, { proofs: 1 })
  for (const w of windows) console.log(`limit    ${w.policy}: ${w.remaining}/${w.limit} left, resets in ${w.reset_seconds} s`)
  console.log(`listing  ${JSON.stringify(yield* keys.list(account.id))}`)
  yield* keys.revoke(account.id, created.api_key.id)
  const again = yield* Effect.flip(authenticate(created.secret))
  console.log(`revoked  authenticating again fails with ${again._tag}`)
  const events = yield* (yield* EventsRepo).list(account.id, { limit: 10 })
  for (const event of events.items) console.log(`event    ${event.id} ${event.type} ${JSON.stringify(event.data)}`)
  console.log(`database ${filename}`)
})

const MainLayer = CoreServices.pipe(
  Layer.provideMerge(SqliteStore({ filename })),
  Layer.provideMerge(NodeEntropy),
  Layer.provideMerge(SessionAuthenticator.none)
)

Effect.runPromise(program.pipe(Effect.provide(MainLayer))).catch((error) => {
  console.error(error)
  process.exit(1)
})
