import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Entropy } from "../kernel/entropy.js"
import { invalidRequest } from "../kernel/decode.js"
import { metadataCountProblem, metadataOf, metadataPatchOf } from "../kernel/metadata.js"
import {
  type InvalidRequest,
  InvalidWebhookUrl,
  SecretRotationInProgress,
  type StorageError,
  type WebhookLimitReached,
  WebhookNotFound
} from "../kernel/errors.js"
import { type AccountId, Ids, WebhookId } from "../kernel/ids.js"
import { Limits } from "../kernel/limits.js"
import { pageOf, type PageQuery } from "../kernel/paging.js"
import { millisFromTimestamp, now, timestampFromMillis } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import { AuditLog } from "../audit/service.js"
import { checkWebhookUrl, firstNonPublic } from "./endpoints/addresses.js"
import { auditWebhook } from "./endpoints/audit.js"
import { WebhookConfig } from "./endpoints/config.js"
import { type DeliveryAttempt, toDeliveryAttempt } from "./delivery/delivery.js"
import { makeRecoveryStarter } from "./recovery/recoveries.js"
import { DeliveriesRepo } from "./delivery/repo.js"
import { WebhooksRepo } from "./endpoints/repo.js"
import { generateWebhookSecret } from "./endpoints/signing.js"
import { HostResolver } from "./delivery/transport.js"
import {
  type CreateWebhookInput,
  DEFAULT_SECRET_OVERLAP_SECONDS,
  type RotateWebhookSecretInput,
  toWebhook,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookChanges,
  type WebhookRecord
} from "./endpoints/webhook.js"

/** A webhook and its signing secret, shown once: by its creation, and by each rotation. */
export interface CreatedWebhook {
  readonly webhook: Webhook
  /** `whsec_…`, shown once. Wrapped so it cannot reach a log by accident. */
  readonly secret: Redacted.Redacted<string>
}

export interface WebhookList {
  readonly webhooks: ReadonlyArray<Webhook>
  readonly total: number
  readonly has_more: boolean
}

export interface DeliveryAttemptList {
  readonly attempts: ReadonlyArray<DeliveryAttempt>
  readonly total: number
  readonly has_more: boolean
}

const isWebhookId = Schema.is(WebhookId)

const notFound = (id: string) => new WebhookNotFound({ message: `No webhook ${JSON.stringify(id)} in this account` })

/** The account's webhook `id`; unknown, malformed and other accounts' ids are all `WebhookNotFound`. */
export const findWebhook = (repo: WebhooksRepo["Type"], accountId: AccountId, id: string): Effect.Effect<WebhookRecord, WebhookNotFound | StorageError> =>
  isWebhookId(id)
    ? Effect.flatMap(repo.get(accountId, id), Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))
    : Effect.fail(notFound(id))

/**
 * Webhook management. A secret is returned by `create` and `rotateSecret` only; every other result
 * is a `Webhook`, which has no secret field at all.
 */
export class Webhooks extends Context.Tag("@mzk/core/Webhooks")<Webhooks, {
  readonly create: (
    accountId: AccountId,
    input: CreateWebhookInput
  ) => Effect.Effect<CreatedWebhook, InvalidRequest | InvalidWebhookUrl | WebhookLimitReached | StorageError>
  readonly list: (accountId: AccountId, query?: PageQuery) => Effect.Effect<WebhookList, InvalidRequest | StorageError>
  /** Unknown, malformed and other accounts' ids are all `WebhookNotFound`. */
  readonly get: (accountId: AccountId, id: string) => Effect.Effect<Webhook, WebhookNotFound | StorageError>
  /**
   * PATCH semantics. `active: true` clears `disabled_reason` and starts afresh, and with
   * `recover_since` also starts a recovery (`WebhookReplay.recover`) in the same transaction;
   * `active: false` cancels the deliveries still pending, as does `remove`.
   */
  readonly update: (
    accountId: AccountId,
    id: string,
    input: UpdateWebhookInput
  ) => Effect.Effect<Webhook, InvalidRequest | InvalidWebhookUrl | WebhookNotFound | StorageError>
  readonly remove: (accountId: AccountId, id: string) => Effect.Effect<void, WebhookNotFound | StorageError>
  /**
   * A new signing secret; the replaced one keeps signing beside it for `expires_in` seconds
   * (default 24 h; 0: not at all), so receivers move over without a delivery failing. While that
   * overlap lasts another rotation is `SecretRotationInProgress`, unless `force`, which drops the
   * secret still in overlap: at most two secrets ever sign.
   */
  readonly rotateSecret: (
    accountId: AccountId,
    id: string,
    input: RotateWebhookSecretInput
  ) => Effect.Effect<CreatedWebhook, WebhookNotFound | SecretRotationInProgress | StorageError>
  /** The attempt log of one webhook, newest first, for `GET /api/v1/webhooks/:id/deliveries`. */
  readonly listDeliveryAttempts: (
    accountId: AccountId,
    id: string,
    query?: PageQuery
  ) => Effect.Effect<DeliveryAttemptList, WebhookNotFound | InvalidRequest | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* WebhooksRepo
      const deliveries = yield* DeliveriesRepo
      const audit = yield* AuditLog
      const entropy = yield* Entropy
      const ids = yield* Ids
      // Read once, when the layer is built: providing them to the layer is then enough, and the
      // URL policy cannot differ from one call to the next.
      const { allowInsecureWebhooks } = yield* WebhookConfig
      const resolver = yield* HostResolver
      const recovery = yield* makeRecoveryStarter

      /** Shape problems are 400 `invalid_request`; a host that is not public is 400 `invalid_webhook_url`. */
      const validateUrl = (raw: string) =>
        Effect.gen(function*() {
          const checked = checkWebhookUrl(raw, allowInsecureWebhooks)
          if (!checked.ok) {
            return yield* checked.problem.kind === "invalid"
              ? invalidRequest([{ path: "url", message: checked.problem.message }])
              : new InvalidWebhookUrl({ message: checked.problem.message })
          }
          if (allowInsecureWebhooks || checked.value.isLiteral) return
          // A name that does not resolve now is let through: DNS may be set up after the webhook,
          // and the transport checks the answer again before every attempt.
          const addresses = yield* resolver.resolve(checked.value.hostname).pipe(
            Effect.orElseSucceed((): ReadonlyArray<string> => [])
          )
          const bad = firstNonPublic(addresses)
          if (bad !== undefined) {
            return yield* new InvalidWebhookUrl({ message: `url resolves to a non-public address (${bad.cls})` })
          }
        })

      const create = (accountId: AccountId, body: CreateWebhookInput) =>
        Effect.gen(function*() {
          const limits = yield* Limits
          yield* validateUrl(body.url)
          const secret = yield* generateWebhookSecret(entropy)
          const at = yield* now
          const record: WebhookRecord = {
            id: yield* ids.make("webhook"),
            account_id: accountId,
            url: body.url,
            events: body.events,
            description: body.description ?? null,
            active: body.active ?? true,
            disabled_reason: null,
            secret: Redacted.value(secret),
            previous_secret: null,
            previous_secret_expires_at: null,
            created_at: at,
            updated_at: at,
            metadata: metadataOf(body.metadata)
          }
          yield* tx.transaction(Effect.zipRight(
            repo.insert(record, { maxPerAccount: limits.maxWebhooksPerAccount }),
            auditWebhook(audit, "webhook.created", null, record)
          ))
          return { webhook: toWebhook(record), secret }
        })

      const list = (accountId: AccountId, query: PageQuery = {}) =>
        Effect.map(Effect.flatMap(pageOf(query), (page) => repo.list(accountId, page)), (found) => ({
          webhooks: found.items.map(toWebhook),
          total: found.total,
          has_more: found.has_more
        }))

      const find = (accountId: AccountId, id: string) => findWebhook(repo, accountId, id)

      const get = (accountId: AccountId, id: string) => Effect.map(find(accountId, id), toWebhook)

      const update = (accountId: AccountId, id: string, body: UpdateWebhookInput) =>
        Effect.gen(function*() {
          const current = yield* find(accountId, id)
          if (body.recover_since !== undefined) {
            if (body.active !== true) {
              return yield* invalidRequest([{ path: "recover_since", message: "goes with \"active\": true (a recovery re-sends what failed to a webhook being re-enabled)" }])
            }
            yield* recovery.checkSince(body.recover_since, "recover_since")
          }
          if (body.url !== undefined) yield* validateUrl(body.url)
          const changes: { -readonly [K in keyof WebhookChanges]: WebhookChanges[K] } = {}
          if (body.url !== undefined) changes.url = body.url
          if (body.events !== undefined) changes.events = body.events
          if (body.description !== undefined) changes.description = body.description
          if (body.metadata !== undefined) changes.metadata = metadataPatchOf(body.metadata)
          if (body.active !== undefined) {
            changes.active = body.active
            // Whoever switches a webhook on or off decides its state; the engine's reason no longer holds.
            changes.disabled_reason = null
          }
          return yield* tx.transaction(Effect.gen(function*() {
            const at = yield* now
            const updated = yield* repo.update(accountId, current.id, changes, at)
            if (Option.isNone(updated)) return yield* notFound(id)
            // Counted after the merge, which this failure takes back with the rest of the transaction.
            const tooMany = metadataCountProblem(updated.value.metadata)
            if (tooMany !== undefined) return yield* invalidRequest([{ path: "metadata", message: tooMany }])
            yield* auditWebhook(audit, "webhook.updated", current, updated.value)
            if (!updated.value.active) yield* deliveries.cancelPendingForWebhook(current.id, at)
            if (body.recover_since !== undefined) yield* recovery.start(updated.value, body.recover_since)
            return toWebhook(updated.value)
          }))
        })

      const remove = (accountId: AccountId, id: string) =>
        isWebhookId(id)
          ? tx.transaction(Effect.gen(function*() {
            if (!(yield* repo.remove(accountId, id))) return yield* notFound(id)
            yield* audit.record(accountId, "webhook.deleted", { type: "webhook", id, name: null })
            yield* deliveries.cancelPendingForWebhook(id, yield* now)
          }))
          : Effect.fail(notFound(id))

      const rotateSecret = (accountId: AccountId, id: string, input: RotateWebhookSecretInput) =>
        Effect.gen(function*() {
          if (!isWebhookId(id)) return yield* notFound(id)
          const secret = yield* generateWebhookSecret(entropy)
          const at = yield* now
          const overlapMs = (input.expires_in ?? DEFAULT_SECRET_OVERLAP_SECONDS) * 1000
          const rotated = yield* tx.transaction(Effect.gen(function*() {
            // Read first only for the audit entry's "from": the conditional write below decides.
            const before = yield* repo.get(accountId, id)
            const after = yield* repo.rotateSecret(accountId, id, {
              secret: Redacted.value(secret),
              previousUntil: overlapMs === 0 ? null : timestampFromMillis(millisFromTimestamp(at) + overlapMs),
              now: at,
              force: input.force ?? false
            })
            if (Option.isSome(after)) {
              yield* audit.record(accountId, "webhook.secret_rotated", { type: "webhook", id: after.value.id, name: null }, [{
                field: "previous_secret_expires_at",
                from: Option.match(before, { onNone: () => null, onSome: (webhook) => webhook.previous_secret_expires_at }),
                to: after.value.previous_secret_expires_at
              }])
            }
            return after
          }))
          if (Option.isSome(rotated)) return { webhook: toWebhook(rotated.value), secret }
          // Refused: read the webhook to say why (the write is the check, so concurrent rotations cannot both pass).
          const current = yield* repo.get(accountId, id)
          if (Option.isNone(current)) return yield* notFound(id)
          return yield* new SecretRotationInProgress({
            message: `The secret replaced by the last rotation signs deliveries until ${current.value.previous_secret_expires_at}; ` +
              "send force: true to end that overlap now"
          })
        })

      const listDeliveryAttempts = (accountId: AccountId, id: string, query: PageQuery = {}) =>
        Effect.gen(function*() {
          const webhook = yield* find(accountId, id)
          const found = yield* deliveries.listAttempts(accountId, webhook.id, yield* pageOf(query))
          return { attempts: found.items.map(toDeliveryAttempt), total: found.total, has_more: found.has_more }
        })

      return { create, list, get, update, remove, rotateSecret, listDeliveryAttempts }
    })
  )
}
