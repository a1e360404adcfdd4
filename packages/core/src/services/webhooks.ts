import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { type DeliveryAttempt, toDeliveryAttempt } from "../domain/delivery.js"
import { EventType } from "../domain/event.js"
import { StoredText, TextWithoutControls } from "../domain/text.js"
import { toWebhook, type Webhook, type WebhookChanges, type WebhookRecord } from "../domain/webhook.js"
import { InvalidRequest, InvalidWebhookUrl, type StorageError, type WebhookLimitReached, WebhookNotFound } from "../errors.js"
import { type AccountId, makeId, WebhookId } from "../ids.js"
import { Limits } from "../limits.js"
import { Entropy } from "../ports/entropy.js"
import { DeliveriesRepo, type Page, Transactor, WebhooksRepo } from "../ports/storage.js"
import { HostResolver } from "../ports/webhookTransport.js"
import { now } from "../time.js"
import { decodeInput } from "../validation.js"
import { checkWebhookUrl, firstNonPublic } from "../webhooks/addresses.js"
import { WebhookConfig } from "../webhooks/config.js"
import { generateWebhookSecret } from "../webhooks/signing.js"

const WebhookUrlText = TextWithoutControls.pipe(
  Schema.minLength(1, { message: () => "url is required" }),
  Schema.maxLength(2048, { message: () => "url must be at most 2048 characters" })
)
const WebhookEvents = Schema.Array(EventType).pipe(
  Schema.minItems(1, { message: () => "events must name at least one event type" }),
  Schema.filter((types) => new Set(types).size === types.length || "events must not repeat an event type")
)
const WebhookDescription = StoredText.pipe(
  Schema.maxLength(1024, { message: () => "description must be at most 1024 characters" })
)

export const CreateWebhookInput = Schema.Struct({
  url: WebhookUrlText,
  events: WebhookEvents,
  description: Schema.optionalWith(Schema.NullOr(WebhookDescription), { exact: true }),
  active: Schema.optionalWith(Schema.Boolean, { exact: true })
}).annotations({ identifier: "CreateWebhookInput" })
export type CreateWebhookInput = typeof CreateWebhookInput.Type

/** PATCH: every field optional, absent means unchanged. */
export const UpdateWebhookInput = Schema.Struct({
  url: Schema.optionalWith(WebhookUrlText, { exact: true }),
  events: Schema.optionalWith(WebhookEvents, { exact: true }),
  description: Schema.optionalWith(Schema.NullOr(WebhookDescription), { exact: true }),
  active: Schema.optionalWith(Schema.Boolean, { exact: true })
}).annotations({ identifier: "UpdateWebhookInput" })
export type UpdateWebhookInput = typeof UpdateWebhookInput.Type

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
const decodeCreate = decodeInput(CreateWebhookInput)
const decodeUpdate = decodeInput(UpdateWebhookInput)
/** More than the per-account limit, so the default page is the whole list, as the spec shows it. */
const DEFAULT_PAGE: Page = { limit: 100 }

/**
 * Webhook management. The secret is returned by `create` only; every other result is a `Webhook`,
 * which has no secret field at all.
 */
export class Webhooks extends Context.Tag("@mzk/core/Webhooks")<Webhooks, {
  readonly create: (
    accountId: AccountId,
    input: unknown
  ) => Effect.Effect<CreatedWebhook, InvalidRequest | InvalidWebhookUrl | WebhookLimitReached | StorageError>
  readonly list: (accountId: AccountId, page?: Page) => Effect.Effect<WebhookList, StorageError>
  /** Unknown, malformed and other accounts' ids are all `WebhookNotFound`. */
  readonly get: (accountId: AccountId, id: string) => Effect.Effect<Webhook, WebhookNotFound | StorageError>
  /**
   * PATCH semantics. `active: true` clears `disabled_reason` and starts afresh; `active: false`
   * cancels the deliveries still pending, as does `remove`.
   */
  readonly update: (
    accountId: AccountId,
    id: string,
    input: unknown
  ) => Effect.Effect<Webhook, InvalidRequest | InvalidWebhookUrl | WebhookNotFound | StorageError>
  readonly remove: (accountId: AccountId, id: string) => Effect.Effect<void, WebhookNotFound | StorageError>
  /** The attempt log of one webhook, oldest first, for `GET /api/v1/webhooks/:id/deliveries`. */
  readonly listDeliveryAttempts: (
    accountId: AccountId,
    id: string,
    page?: Page
  ) => Effect.Effect<DeliveryAttemptList, WebhookNotFound | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* WebhooksRepo
      const deliveries = yield* DeliveriesRepo
      const entropy = yield* Entropy
      // Read once, when the layer is built: providing them to the layer is then enough, and the
      // URL policy cannot differ from one call to the next.
      const { allowInsecureWebhooks } = yield* WebhookConfig
      const resolver = yield* HostResolver

      const notFound = (id: string) => new WebhookNotFound({ message: `No webhook ${JSON.stringify(id)} in this account` })

      /** Shape problems are 400 `invalid_request`; a host that is not public is 400 `invalid_webhook_url`. */
      const validateUrl = (raw: string) =>
        Effect.gen(function*() {
          const checked = checkWebhookUrl(raw, allowInsecureWebhooks)
          if (!checked.ok) {
            return yield* checked.problem.kind === "invalid"
              ? new InvalidRequest({
                message: `Invalid request: url: ${checked.problem.message}`,
                details: [{ path: "url", message: checked.problem.message }]
              })
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

      const create = (accountId: AccountId, input: unknown) =>
        Effect.gen(function*() {
          const limits = yield* Limits
          const body = yield* decodeCreate(input)
          yield* validateUrl(body.url)
          const secret = yield* generateWebhookSecret
          const at = yield* now
          const record: WebhookRecord = {
            id: yield* makeId("webhook"),
            account_id: accountId,
            url: body.url,
            events: body.events,
            description: body.description ?? null,
            active: body.active ?? true,
            disabled_reason: null,
            secret: Redacted.value(secret),
            created_at: at,
            updated_at: at
          }
          yield* repo.insert(record, { maxPerAccount: limits.maxWebhooksPerAccount })
          return { webhook: toWebhook(record), secret }
        }).pipe(Effect.provideService(Entropy, entropy))

      const list = (accountId: AccountId, page: Page = DEFAULT_PAGE) =>
        Effect.map(repo.list(accountId, page), (found) => ({
          webhooks: found.items.map(toWebhook),
          total: found.total,
          has_more: found.has_more
        }))

      const find = (accountId: AccountId, id: string) =>
        isWebhookId(id)
          ? Effect.flatMap(repo.get(accountId, id), Option.match({
            onNone: () => Effect.fail(notFound(id)),
            onSome: (record) => Effect.succeed(record)
          }))
          : Effect.fail(notFound(id))

      const get = (accountId: AccountId, id: string) => Effect.map(find(accountId, id), toWebhook)

      const update = (accountId: AccountId, id: string, input: unknown) =>
        Effect.gen(function*() {
          const body = yield* decodeUpdate(input)
          const current = yield* find(accountId, id)
          if (body.url !== undefined) yield* validateUrl(body.url)
          const changes: { -readonly [K in keyof WebhookChanges]: WebhookChanges[K] } = {}
          if (body.url !== undefined) changes.url = body.url
          if (body.events !== undefined) changes.events = body.events
          if (body.description !== undefined) changes.description = body.description
          if (body.active !== undefined) {
            changes.active = body.active
            // Whoever switches a webhook on or off decides its state; the engine's reason no longer holds.
            changes.disabled_reason = null
          }
          return yield* tx.transaction(Effect.gen(function*() {
            const at = yield* now
            const updated = yield* repo.update(accountId, current.id, changes, at)
            if (Option.isNone(updated)) return yield* notFound(id)
            if (!updated.value.active) yield* deliveries.cancelPendingForWebhook(current.id, at)
            return toWebhook(updated.value)
          }))
        })

      const remove = (accountId: AccountId, id: string) =>
        isWebhookId(id)
          ? tx.transaction(Effect.gen(function*() {
            if (!(yield* repo.remove(accountId, id))) return yield* notFound(id)
            yield* deliveries.cancelPendingForWebhook(id, yield* now)
          }))
          : Effect.fail(notFound(id))

      const listDeliveryAttempts = (accountId: AccountId, id: string, page: Page = { limit: 20 }) =>
        Effect.gen(function*() {
          const webhook = yield* find(accountId, id)
          const found = yield* deliveries.listAttempts(accountId, webhook.id, page)
          return { attempts: found.items.map(toDeliveryAttempt), total: found.total, has_more: found.has_more }
        })

      return { create, list, get, update, remove, listDeliveryAttempts }
    })
  )
}
