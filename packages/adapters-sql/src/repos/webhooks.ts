import { type WebhookRecord, WebhookLimitReached, WebhooksRepo } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable, Updateable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { WebhooksTable } from "../schema.js"
import { insertUnderAccountLimit } from "./accountLimit.js"
import { page } from "./paging.js"

const toRecord = (row: Selectable<WebhooksTable>): WebhookRecord =>
  ({ ...row, events: JSON.parse(row.events), active: row.active === 1, metadata: JSON.parse(row.metadata) }) as WebhookRecord

export const sqlWebhooks = (conn: SqlConnection) =>
  WebhooksRepo.of({
    insert: (webhook, { maxPerAccount }) =>
      insertUnderAccountLimit(conn, {
        accountId: webhook.account_id,
        max: maxPerAccount,
        count: (db) =>
          db.selectFrom("webhooks").select((eb) => eb.fn.countAll<number | string>().as("count"))
            .where("account_id", "=", webhook.account_id),
        insert: (db) =>
          db.insertInto("webhooks").values({
            ...webhook,
            events: JSON.stringify(webhook.events),
            active: webhook.active ? 1 : 0,
            metadata: JSON.stringify(webhook.metadata)
          }),
        full: () => new WebhookLimitReached({ message: `An account may hold at most ${maxPerAccount} webhooks` })
      }),
    get: (accountId, id) =>
      conn.first((db) => db.selectFrom("webhooks").selectAll().where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, request) =>
      page(conn, request, (db) => db.selectFrom("webhooks").where("account_id", "=", accountId), toRecord),
    update: (accountId, id, changes, at) => {
      const set: Updateable<WebhooksTable> = { updated_at: at }
      if (changes.url !== undefined) set.url = changes.url
      if (changes.events !== undefined) set.events = JSON.stringify(changes.events)
      if (changes.description !== undefined) set.description = changes.description
      if (changes.active !== undefined) set.active = changes.active ? 1 : 0
      if (changes.disabled_reason !== undefined) set.disabled_reason = changes.disabled_reason
      const patch = changes.metadata
      return conn.first((db) =>
        db.updateTable("webhooks").set(set)
          // Merged in the write itself, so concurrent updates of different keys both land.
          .$if(patch !== undefined, (q) => q.set({ metadata: conn.dialect.metadata.merged(patch!) }))
          .where("id", "=", id).where("account_id", "=", accountId).returningAll()
      ).pipe(Effect.map(Option.map(toRecord)))
    },
    rotateSecret: (accountId, id, { force, now, previousUntil, secret }) =>
      conn.first((db) => {
        const rotate = db.updateTable("webhooks")
          .set((eb) => ({
            // Every right-hand side reads the row as it was, so `previous_secret` gets the replaced secret.
            previous_secret: previousUntil === null ? null : eb.ref("secret"),
            previous_secret_expires_at: previousUntil,
            secret,
            updated_at: now
          }))
          .where("id", "=", id)
          .where("account_id", "=", accountId)
        return (force
          ? rotate
          : rotate.where((eb) => eb.or([eb("previous_secret_expires_at", "is", null), eb("previous_secret_expires_at", "<=", now)]))
        ).returningAll()
      }).pipe(Effect.map(Option.map(toRecord))),
    remove: (accountId, id) =>
      conn.affected((db) => db.deleteFrom("webhooks").where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map((count) => count > 0)),
    // Subscriptions are a JSON list, filtered here: an account holds at most a few dozen webhooks.
    listSubscribed: (accountId, type) =>
      conn.rows((db) =>
        db.selectFrom("webhooks").selectAll().where("account_id", "=", accountId).where("active", "=", 1).orderBy("id")
      ).pipe(Effect.map((rows) => rows.map(toRecord).filter((w) => w.events.includes(type))))
  })
