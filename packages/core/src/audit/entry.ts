import { Schema } from "effect"
import { BASE32_CHARS } from "../kernel/encoding.js"
import { AccountId, AuditEntryId, ID_PREFIXES } from "../kernel/ids.js"
import { pageQuery } from "../kernel/paging.js"
import { TextWithoutControls } from "../kernel/text.js"
import { Timestamp } from "../kernel/time.js"

/**
 * What was done. Past tense, `<target type>.<verb>`, like the event types. Only changes are
 * recorded (keys, webhooks, circuits), never reads or proofs.
 */
export const AUDIT_ACTIONS = [
  "key.created",
  "key.revoked",
  "key.rolled",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
  "webhook.disabled",
  "webhook.secret_rotated",
  "circuit.created",
  "circuit.removed",
  "verification_key.created",
  "verification_key.deleted"
] as const
export const AuditAction = Schema.Literal(...AUDIT_ACTIONS).annotations({ identifier: "AuditAction" })
export type AuditAction = typeof AuditAction.Type

/**
 * Who did it: an API key (its id), a session of the embedding application (the id its
 * `SessionAuthenticator` gave, else null), the `mzk` command line on the server, or mzk itself
 * (`system`: a webhook switched off after its deliveries failed; also the embedding application
 * calling the core without saying who).
 */
export const AuditActor = Schema.Struct({
  type: Schema.Literal("api_key", "session", "cli", "system"),
  id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditActor" })
export type AuditActor = typeof AuditActor.Type

/** What it was done to: the resource's id and, where it has one, its name as it was then. */
export const AuditTarget = Schema.Struct({
  type: Schema.Literal("api_key", "webhook", "circuit", "verification_key"),
  id: Schema.String,
  name: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditTarget" })
export type AuditTarget = typeof AuditTarget.Type

/** A field's value as the audit log shows it: the fields of keys and webhooks are text, flags, lists of names, or unset. */
export const AuditValue = Schema.Union(Schema.String, Schema.Boolean, Schema.Array(Schema.String), Schema.Null)
  .annotations({ identifier: "AuditValue" })
export type AuditValue = typeof AuditValue.Type

/** A field the action set or changed, before and after (never a secret: secrets are not fields recorded here). */
export const AuditChange = Schema.Struct({ field: Schema.String, from: AuditValue, to: AuditValue }).annotations({ identifier: "AuditChange" })
export type AuditChange = typeof AuditChange.Type

export const AuditEntry = Schema.Struct({
  id: AuditEntryId,
  action: AuditAction,
  actor: AuditActor,
  target: AuditTarget,
  request_id: Schema.NullOr(Schema.String).annotations({ description: "The `Request-Id` of the API request that made the change; null outside the API" }),
  ip_address: Schema.NullOr(Schema.String).annotations({
    description: "The client's address (behind trusted proxies, the one they forwarded); null outside the API"
  }),
  user_agent: Schema.NullOr(Schema.String),
  changes: Schema.NullOr(Schema.Array(AuditChange)).annotations({
    description: "The fields the action set or changed, before and after; null where it changed none it shows (a revocation, a removal)"
  }),
  created_at: Timestamp
}).annotations({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

export interface AuditEntryRecord extends AuditEntry {
  readonly account_id: AccountId
}

export const toAuditEntry = ({ account_id: _, ...entry }: AuditEntryRecord): AuditEntry => entry

const TARGET_ID = new RegExp(`^(${ID_PREFIXES.key}|${ID_PREFIXES.webhook}|${ID_PREFIXES.circuit})_${BASE32_CHARS}{26}$`)

/**
 * `GET /audit-log`: newest first, paged by `starting_after`; optionally only one action, one
 * target's entries (a key, webhook or circuit id), or one actor's (a key id, or a session's id).
 */
export const ListAuditLogQuery = Schema.Struct({
  ...pageQuery(AuditEntryId).fields,
  action: Schema.optionalWith(AuditAction, { exact: true }),
  target_id: Schema.optionalWith(
    Schema.String.pipe(Schema.pattern(TARGET_ID, { message: () => "must be the id of a key, webhook or circuit" })),
    { exact: true }
  ),
  actor_id: Schema.optionalWith(TextWithoutControls.pipe(Schema.minLength(1), Schema.maxLength(256)), { exact: true })
}).annotations({ identifier: "ListAuditLogQuery" })
export type ListAuditLogQuery = typeof ListAuditLogQuery.Type

/** What storage filters a listing by. */
export interface AuditLogFilter {
  readonly action?: AuditAction | undefined
  readonly target_id?: string | undefined
  readonly actor_id?: string | undefined
}
