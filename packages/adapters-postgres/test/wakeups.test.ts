import { PostgresStore, PostgresWakeups } from "@mzk/adapters-postgres"
import {
  Accounts,
  ApiKeys,
  CircuitBuildWakeup,
  Circuits,
  DeliveryWakeup,
  Events,
  type KeyId,
  now,
  ProofCancelWakeup,
  ProofWakeup,
  Proofs,
  ProofsRepo,
  Webhooks
} from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"

/**
 * Two cores on one database stand for two processes: what one writes must wake the other's idle
 * loops at once (LISTEN/NOTIFY), not at its next poll.
 */
describePostgres("Postgres wake-ups across processes", () => {
  it.scopedLive("queued proofs, new deliveries, uploaded circuits and canceled running proofs written by one process wake the other's loops", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const writer = yield* Layer.build(testCore(PostgresStore({ connectionString: url }), { seed: "writer" }))
      const listener = yield* Layer.build(
        PostgresWakeups({ connectionString: url }).pipe(
          Layer.provideMerge(testCore(PostgresStore({ connectionString: url, migrate: false }), { seed: "listener" }))
        )
      )
      const inWriter = <A, E>(effect: Effect.Effect<A, E, any>) => effect.pipe(Effect.provide(writer)) as Effect.Effect<A, E>
      const proofWoken = Context.get(listener, ProofWakeup).take
      const deliveryWoken = Context.get(listener, DeliveryWakeup).take
      // Let the LISTEN connection come up before anything is written.
      yield* Effect.sleep("300 millis")

      const account = yield* inWriter(Effect.flatMap(Accounts, (a) => a.create({ name: "Shared" })))
      const principal = yield* inWriter(Effect.gen(function*() {
        const keys = yield* ApiKeys
        return yield* keys.authenticate((yield* keys.create(account.id, { name: "k" })).secret)
      }))

      const proofFiber = yield* Effect.fork(proofWoken)
      yield* inWriter(Effect.flatMap(Proofs, (p) => p.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "5" } })))
      const proofWake = yield* proofFiber.await.pipe(Effect.timeout("3 seconds"))
      expect(proofWake._tag).toBe("Success")

      yield* inWriter(Effect.flatMap(Webhooks, (w) => w.create(account.id, { url: "https://hooks.example.com/x", events: ["key.revoked"] })))
      const deliveryFiber = yield* Effect.fork(deliveryWoken)
      yield* inWriter(Effect.gen(function*() {
        yield* (yield* Events).record(account.id, "key.revoked", { id: "key_00000000000000000000000000" as KeyId, name: "x", revoked_at: yield* now, metadata: {} })
      }))
      const deliveryWake = yield* deliveryFiber.await.pipe(Effect.timeout("3 seconds"))
      expect(deliveryWake._tag).toBe("Success")

      const buildFiber = yield* Effect.fork(Context.get(listener, CircuitBuildWakeup).take)
      yield* inWriter(Effect.flatMap(Circuits, (c) =>
        c.create(account.id, { name: "shared", source: { kind: "circom", main: "m.circom", files: { "m.circom": new TextEncoder().encode("component main = T();") } } })))
      const buildWake = yield* buildFiber.await.pipe(Effect.timeout("3 seconds"))
      expect(buildWake._tag).toBe("Success")

      // A running proof canceled by one process wakes the other's proof worker to check its claims;
      // a queued one canceled concerns no worker and wakes none.
      const cancelWakeup = Context.get(listener, ProofCancelWakeup)
      const request = inWriter(Effect.flatMap(Proofs, (p) => p.create(principal.account_id, { type: "multiplier", inputs: { a: "3", b: "5" } })))
      const running = (yield* request).proof_id
      // Claimed as a worker would (with the one queued above), and then another queued.
      yield* inWriter(Effect.flatMap(ProofsRepo, (repo) =>
        Effect.flatMap(now, (at) => repo.claimNext({ now: at, leaseUntil: at, maxRunningPerAccount: 10, limit: 10 }))))
      const queued = (yield* request).proof_id
      yield* Effect.sleep("300 millis")
      yield* cancelWakeup.clear
      yield* inWriter(Effect.flatMap(Proofs, (p) => p.cancel(account.id, queued)))
      yield* Effect.sleep("500 millis")
      const quiet = yield* Effect.fork(cancelWakeup.take)
      expect((yield* quiet.await.pipe(Effect.timeout("300 millis"), Effect.option))._tag).toBe("None")
      yield* inWriter(Effect.flatMap(Proofs, (p) => p.cancel(account.id, running)))
      const cancelWake = yield* quiet.await.pipe(Effect.timeout("3 seconds"))
      expect(cancelWake._tag).toBe("Success")
    }), 30_000)
})
