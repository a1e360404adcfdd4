import {
  type AccountId,
  Accounts,
  type ApiKeyRecord,
  type Ids,
  type EventRecord,
  hashApiKey,
  makeId,
  now,
  SCOPES,
  type Timestamp,
  type WebhookRecord,
  WebhooksRepo
} from "@mzk/core"
import { Effect } from "effect"

let sequence = 0

/** The `now` of repository calls that take one, where the test is not about time. */
export const NOW = "2026-01-01T00:00:00.000Z" as Timestamp

/** A fresh account, so tests sharing one database never see each other's rows. */
export const freshAccount = Effect.gen(function*() {
  const account = yield* (yield* Accounts).create({ name: `conformance-${++sequence}` })
  return account.id
})

export const keyRecord = (accountId: AccountId, overrides: Partial<ApiKeyRecord> = {}) =>
  Effect.gen(function*() {
    const id = yield* makeId("key")
    const record: ApiKeyRecord = {
      id,
      account_id: accountId,
      name: "ci-key",
      description: null,
      prefix: "mzk_abcdef",
      scopes: [...SCOPES],
      hash: hashApiKey(`raw-${id}`),
      created_at: yield* now,
      last_used_at: null,
      revoked_at: null,
      expires_at: null,
      replaced_by: null,
      metadata: {},
      ...overrides
    }
    return record
  })

export const webhookRecord = (accountId: AccountId, overrides: Partial<WebhookRecord> = {}) =>
  Effect.gen(function*() {
    const at = yield* now
    const record: WebhookRecord = {
      id: yield* makeId("webhook"),
      account_id: accountId,
      url: "https://hooks.example.com/mzk",
      events: ["proof.completed", "key.created"],
      description: null,
      active: true,
      disabled_reason: null,
      secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I=",
      previous_secret: null,
      previous_secret_expires_at: null,
      created_at: at,
      updated_at: at,
      metadata: {},
      ...overrides
    }
    return record
  })

export const eventRecord = (accountId: AccountId, overrides: Partial<EventRecord> = {}): Effect.Effect<EventRecord, never, Ids> =>
  Effect.gen(function*() {
    return {
      id: yield* makeId("event"),
      account_id: accountId,
      type: "key.revoked",
      created_at: yield* now,
      data: { nested: { list: [1, "two", null], flag: true }, text: "ünïcödé" },
      ...overrides
    } satisfies EventRecord
  })

/** A webhook of the account, stored. */
export const storedWebhook = (accountId: AccountId, overrides: Partial<WebhookRecord> = {}) =>
  Effect.gen(function*() {
    const webhook = yield* webhookRecord(accountId, overrides)
    yield* (yield* WebhooksRepo).insert(webhook, { maxPerAccount: 20 })
    return webhook
  })

export const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((r) => r.id)
