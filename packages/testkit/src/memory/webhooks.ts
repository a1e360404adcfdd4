import { type WebhookRecord, WebhookLimitReached, WebhooksRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import { byId, type MemoryDb, paginate } from "./db.js"

export const memoryWebhooks = (db: MemoryDb) => {
  const webhooks = db.table<WebhookRecord>("webhooks")
  const own = (accountId: string, id: string) => {
    const webhook = webhooks.get(id)
    return webhook !== undefined && webhook.account_id === accountId ? webhook : undefined
  }
  const ofAccount = (accountId: string) => [...webhooks.values()].filter((w) => w.account_id === accountId)
  return WebhooksRepo.of({
    insert: (webhook, { maxPerAccount }) =>
      db.write(Effect.gen(function*() {
        const count = ofAccount(webhook.account_id).length
        yield* Effect.yieldNow()
        if (count >= maxPerAccount) {
          return yield* new WebhookLimitReached({ message: `An account may hold at most ${maxPerAccount} webhooks` })
        }
        webhooks.set(webhook.id, webhook)
      })),
    get: (accountId, id) => Effect.sync(() => Option.fromNullable(own(accountId, id))),
    list: (accountId, page) => Effect.sync(() => paginate(ofAccount(accountId), page)),
    update: (accountId, id, changes, at) =>
      db.write(Effect.sync(() => {
        const webhook = own(accountId, id)
        if (webhook === undefined) return Option.none()
        const updated: WebhookRecord = { ...webhook, ...changes, updated_at: at }
        webhooks.set(id, updated)
        return Option.some(updated)
      })),
    rotateSecret: (accountId, id, { force, now, previousUntil, secret }) =>
      db.write(Effect.sync(() => {
        const webhook = own(accountId, id)
        if (webhook === undefined) return Option.none()
        const overlapEnds = webhook.previous_secret_expires_at
        if (!force && overlapEnds !== null && overlapEnds > now) return Option.none()
        const rotated: WebhookRecord = {
          ...webhook,
          secret,
          previous_secret: previousUntil === null ? null : webhook.secret,
          previous_secret_expires_at: previousUntil,
          updated_at: now
        }
        webhooks.set(id, rotated)
        return Option.some(rotated)
      })),
    remove: (accountId, id) => db.write(Effect.sync(() => own(accountId, id) !== undefined && webhooks.delete(id))),
    listSubscribed: (accountId, type) =>
      Effect.sync(() => ofAccount(accountId).filter((w) => w.active && w.events.includes(type)).sort(byId))
  })
}
