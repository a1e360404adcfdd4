import { expect } from "@effect/vitest"
import { type Timestamp, WebhooksRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { ConformanceIt } from "./env.js"
import { freshAccount, webhookRecord } from "./fixtures.js"

const at = (iso: string) => iso as Timestamp
const T1 = at("2026-02-01T00:00:00.000Z")
const T2 = at("2026-02-01T01:00:00.000Z")
const T3 = at("2026-02-01T02:00:00.000Z")
const secretOf = (n: number) => `whsec_${String(n).padStart(43, "A")}=`

/** Creates a webhook of a fresh account, its secret `secretOf(1)`. */
const stored = Effect.gen(function*() {
  const repo = yield* WebhooksRepo
  const account = yield* freshAccount
  const webhook = yield* webhookRecord(account, { secret: secretOf(1) })
  yield* repo.insert(webhook, { maxPerAccount: 20 })
  return { repo, account, webhook }
})

export const secretRotationTests = (it: ConformanceIt, timeout: number) => {
  it.effect("webhooks: rotateSecret keeps the replaced secret until previousUntil, and returns the row as written", () =>
    Effect.gen(function*() {
      const { account, repo, webhook } = yield* stored
      const rotated = yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(2), previousUntil: T2, now: T1, force: false })
      const expected = { ...webhook, secret: secretOf(2), previous_secret: secretOf(1), previous_secret_expires_at: T2, updated_at: T1 }
      expect(rotated).toEqual(Option.some(expected))
      expect(yield* repo.get(account, webhook.id)).toEqual(Option.some(expected))
      expect((yield* repo.list(account, { limit: 10 })).items).toEqual([expected])
    }), timeout)

  it.effect("webhooks: rotateSecret in an overlap is none without force; at its end, or with force, it replaces, dropping the oldest", () =>
    Effect.gen(function*() {
      const { account, repo, webhook } = yield* stored
      yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(2), previousUntil: T2, now: T1, force: false })
      const before = yield* repo.get(account, webhook.id)
      expect(yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(3), previousUntil: T3, now: T1, force: false })).toEqual(Option.none())
      expect(yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(3), previousUntil: null, now: at("2026-02-01T00:59:59.999Z"), force: false }))
        .toEqual(Option.none())
      expect(yield* repo.get(account, webhook.id)).toEqual(before)
      // The overlap ends at T2: from then on the previous secret signs nothing, and a rotation needs no force.
      const atEnd = yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(3), previousUntil: T3, now: T2, force: false })
      expect(Option.map(atEnd, (w) => [w.secret, w.previous_secret, w.previous_secret_expires_at])).toEqual(Option.some([secretOf(3), secretOf(2), T3]))
      const forced = yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(4), previousUntil: T3, now: T2, force: true })
      expect(Option.map(forced, (w) => [w.secret, w.previous_secret, w.previous_secret_expires_at, w.updated_at]))
        .toEqual(Option.some([secretOf(4), secretOf(3), T3, T2]))
    }), timeout)

  it.effect("webhooks: rotateSecret with previousUntil null keeps no previous secret; other accounts' and unknown ids are none", () =>
    Effect.gen(function*() {
      const { account, repo, webhook } = yield* stored
      yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(2), previousUntil: T2, now: T1, force: false })
      const cut = yield* repo.rotateSecret(account, webhook.id, { secret: secretOf(3), previousUntil: null, now: T1, force: true })
      expect(Option.map(cut, (w) => [w.secret, w.previous_secret, w.previous_secret_expires_at])).toEqual(Option.some([secretOf(3), null, null]))
      const stranger = yield* freshAccount
      expect(yield* repo.rotateSecret(stranger, webhook.id, { secret: secretOf(9), previousUntil: null, now: T1, force: true })).toEqual(Option.none())
      const unknown = (yield* webhookRecord(account)).id
      expect(yield* repo.rotateSecret(account, unknown, { secret: secretOf(9), previousUntil: null, now: T1, force: true })).toEqual(Option.none())
      expect(Option.map(yield* repo.get(account, webhook.id), (w) => w.secret)).toEqual(Option.some(secretOf(3)))
      // The other fields of the webhook, and an update after it, leave the secrets as they are.
      const updated = yield* repo.update(account, webhook.id, { description: "after", active: false }, T2)
      expect(Option.map(updated, (w) => [w.secret, w.previous_secret, w.description])).toEqual(Option.some([secretOf(3), null, "after"]))
    }), timeout)

  it.effect("webhooks: of 10 concurrent rotations without force, exactly one passes; the original secret is the previous one", () =>
    Effect.gen(function*() {
      const { account, repo, webhook } = yield* stored
      const results = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) =>
          repo.rotateSecret(account, webhook.id, { secret: secretOf(10 + i), previousUntil: T2, now: T1, force: false })),
        { concurrency: "unbounded" }
      )
      const passed = results.filter(Option.isSome).map((r) => r.value)
      expect(passed.length).toBe(1)
      expect(passed[0]!.previous_secret).toBe(secretOf(1))
      expect(yield* repo.get(account, webhook.id)).toEqual(Option.some(passed[0]))
    }), timeout)
}
