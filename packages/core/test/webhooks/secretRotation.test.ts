import { describe, expect, it } from "@effect/vitest"
import { Accounts, decodeInput, RotateWebhookSecretInput, signingSecrets, type Timestamp, Webhooks, WebhooksRepo } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Clock, Effect, Option, Redacted, TestClock } from "effect"

const HOUR = 3_600_000
const START = Date.UTC(2026, 10, 23, 9, 0, 0)
const iso = (ms: number) => new Date(ms).toISOString() as Timestamp
const decodeRotate = decodeInput(RotateWebhookSecretInput)

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  const account = (yield* (yield* Accounts).create({ name: "Rotation" })).id
  const webhooks = yield* Webhooks
  const created = yield* webhooks.create(account, { url: "https://hooks.example.com/mzk", events: ["key.created"] })
  return { account, webhooks, created, id: created.webhook.id }
})

/** The secrets that sign a delivery made now, as the engine picks them from storage. */
const signingNow = (account: string, id: string) =>
  Effect.gen(function*() {
    const record = Option.getOrThrow(yield* (yield* WebhooksRepo).get(account as never, id as never))
    return signingSecrets(record, yield* Clock.currentTimeMillis)
  })

describe("webhook secret rotation (TestClock)", () => {
  it.effect("a rotation returns a new secret; both sign for the overlap (24 h by default), then only the new one", () =>
    Effect.gen(function*() {
      const { account, created, id, webhooks } = yield* setup
      const first = Redacted.value(created.secret)
      yield* TestClock.adjust(1_000)
      const rotated = yield* webhooks.rotateSecret(account, id, yield* decodeRotate({}))
      const second = Redacted.value(rotated.secret)
      expect(second).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(second).not.toBe(first)
      expect(String(rotated.secret)).not.toContain("whsec_")
      expect(rotated.webhook).toEqual({ ...created.webhook, previous_secret_expires_at: iso(START + 1_000 + 24 * HOUR), updated_at: iso(START + 1_000) })
      expect(yield* webhooks.get(account, id)).toEqual(rotated.webhook)
      expect(JSON.stringify(yield* webhooks.list(account))).not.toContain("whsec_")
      expect(yield* signingNow(account, id)).toEqual([second, first])
      yield* TestClock.adjust(24 * HOUR - 1)
      expect(yield* signingNow(account, id)).toEqual([second, first])
      yield* TestClock.adjust(1)
      expect(yield* signingNow(account, id)).toEqual([second])
      // Once the overlap is over, rotating again needs no force.
      const third = yield* webhooks.rotateSecret(account, id, { expires_in: 60 })
      expect(yield* signingNow(account, id)).toEqual([Redacted.value(third.secret), second])
    }).pipe(Effect.provide(testCore())))

  it.effect("inside an overlap another rotation is SecretRotationInProgress, naming when it ends; nothing changes", () =>
    Effect.gen(function*() {
      const { account, id, webhooks } = yield* setup
      const rotated = yield* webhooks.rotateSecret(account, id, { expires_in: 600 })
      const refused = yield* Effect.flip(webhooks.rotateSecret(account, id, {}))
      expect(refused._tag).toBe("SecretRotationInProgress")
      expect(refused.message).toContain(iso(START + 600_000))
      expect(refused.message).not.toContain("whsec_")
      expect((yield* Effect.flip(webhooks.rotateSecret(account, id, { force: false, expires_in: 0 })))._tag).toBe("SecretRotationInProgress")
      expect(yield* webhooks.get(account, id)).toEqual(rotated.webhook)
    }).pipe(Effect.provide(testCore())))

  it.effect("force ends the older overlap at once: the secret it replaced stops, at most two secrets sign", () =>
    Effect.gen(function*() {
      const { account, created, id, webhooks } = yield* setup
      const second = yield* webhooks.rotateSecret(account, id, { expires_in: 3_600 })
      yield* TestClock.adjust(60_000)
      const third = yield* webhooks.rotateSecret(account, id, { force: true, expires_in: 7_200 })
      const signing = yield* signingNow(account, id)
      expect(signing).toEqual([Redacted.value(third.secret), Redacted.value(second.secret)])
      expect(signing).not.toContain(Redacted.value(created.secret))
      expect(third.webhook.previous_secret_expires_at).toBe(iso(START + 60_000 + 7_200_000))
    }).pipe(Effect.provide(testCore())))

  it.effect("expires_in 0 stops the replaced secret now, leaves no overlap, and a leaked secret is cut off with force", () =>
    Effect.gen(function*() {
      const { account, id, webhooks } = yield* setup
      const now = yield* webhooks.rotateSecret(account, id, { expires_in: 0 })
      expect(now.webhook.previous_secret_expires_at).toBeNull()
      expect(yield* signingNow(account, id)).toEqual([Redacted.value(now.secret)])
      // No overlap was left, so the next rotation needs no force.
      yield* webhooks.rotateSecret(account, id, { expires_in: 3_600 })
      const cut = yield* webhooks.rotateSecret(account, id, { expires_in: 0, force: true })
      expect(yield* signingNow(account, id)).toEqual([Redacted.value(cut.secret)])
      expect((yield* webhooks.get(account, id)).previous_secret_expires_at).toBeNull()
    }).pipe(Effect.provide(testCore())))

  it.effect("unknown, malformed and other accounts' ids are WebhookNotFound", () =>
    Effect.gen(function*() {
      const { id, webhooks } = yield* setup
      const stranger = (yield* (yield* Accounts).create({ name: "Stranger" })).id
      for (const [who, which] of [[stranger, id], [stranger, "wh_nope"], [stranger, "key_01jd0000000000000000000000"]] as const) {
        expect((yield* Effect.flip(webhooks.rotateSecret(who, which, {})))._tag).toBe("WebhookNotFound")
      }
      expect((yield* Effect.flip(webhooks.rotateSecret(stranger, "wh_01jd0000000000000000000000", { force: true })))._tag).toBe("WebhookNotFound")
    }).pipe(Effect.provide(testCore())))

  it.effect("expires_in is whole seconds from 0 to 7 days; force a boolean; nothing else", () =>
    Effect.gen(function*() {
      expect(yield* decodeRotate({ expires_in: 604_800, force: true })).toEqual({ expires_in: 604_800, force: true })
      for (const body of [{ expires_in: -1 }, { expires_in: 604_801 }, { expires_in: 1.5 }, { expires_in: "60" }, { force: "yes" }, { overlap: 60 }]) {
        const refused = yield* Effect.flip(decodeRotate(body))
        expect(refused._tag, JSON.stringify(body)).toBe("InvalidRequest")
        expect(refused.details?.map((d) => d.path), JSON.stringify(body)).toEqual([Object.keys(body)[0]])
      }
    }))
})
