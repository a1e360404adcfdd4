import { Effect } from "effect"
import type { AuditChange } from "../../audit/entry.js"
import type { AuditLog } from "../../audit/service.js"
import type { Webhook, WebhookRecord } from "./webhook.js"

/** What the audit log shows of a webhook: every field a client sets, never its secret. */
const AUDITED = ["url", "events", "description", "active", "disabled_reason", "metadata"] as const satisfies ReadonlyArray<keyof Webhook>

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** A field as the audit log holds it: metadata as its `key=value` pairs, in key order. */
const audited = (webhook: Webhook, field: (typeof AUDITED)[number]): AuditChange["to"] => {
  if (field !== "metadata") return webhook[field]
  return Object.keys(webhook.metadata).sort().map((key) => `${key}=${webhook.metadata[key]}`)
}

/** The audited fields that differ between two states of a webhook (`null`: before it existed). */
export const webhookChanges = (before: Webhook | null, after: Webhook): ReadonlyArray<AuditChange> =>
  AUDITED.flatMap((field) => {
    const from = before === null ? null : audited(before, field)
    const to = audited(after, field)
    // A webhook created without metadata has none to show.
    if (before === null && field === "metadata" && Array.isArray(to) && to.length === 0) return []
    return before === null || !same(from, to) ? [{ field, from, to }] : []
  })

/** Records a change of a webhook, in the caller's transaction; an update that changed nothing is not one. */
export const auditWebhook = (
  audit: AuditLog["Type"],
  action: "webhook.created" | "webhook.updated" | "webhook.disabled",
  before: Webhook | null,
  after: WebhookRecord
) => {
  const changes = webhookChanges(before, after)
  return action === "webhook.updated" && changes.length === 0
    ? Effect.void
    : audit.record(after.account_id, action, { type: "webhook", id: after.id, name: null }, changes)
}
