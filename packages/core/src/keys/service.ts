import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Entropy } from "../kernel/entropy.js"
import {
  InsufficientScope,
  InvalidApiKey,
  type InvalidRequest,
  KeyAlreadyRolled,
  type KeyLimitReached,
  KeyNotFound,
  type StorageError
} from "../kernel/errors.js"
import { type AccountId, Ids, KeyId } from "../kernel/ids.js"
import { Limits } from "../kernel/limits.js"
import { metadataOf } from "../kernel/metadata.js"
import type { Principal } from "../kernel/principal.js"
import { SCOPES, type Scope } from "../kernel/scopes.js"
import { Transactor } from "../kernel/transaction.js"
import { millisFromTimestamp, now, type Timestamp, timestampFromMillis } from "../kernel/time.js"
import { invalidRequest } from "../kernel/decode.js"
import { logStorageFailure } from "../kernel/storageFailure.js"
import { Events } from "../events/service.js"
import { AuditLog } from "../audit/service.js"
import {
  type ApiKey,
  type ApiKeyRecord,
  type CreateKeyInput,
  DEFAULT_ROLL_OVERLAP_SECONDS,
  isActiveKey,
  type RollKeyInput,
  toApiKey
} from "./apiKey.js"
import { KeysRepo } from "./repo.js"
import { ApiKeyHashing, displayPrefix, generateApiKey, isWellFormedApiKey } from "./token.js"

export interface CreatedKey {
  readonly api_key: ApiKey
  /** The raw key. Shown once; storage keeps only its hash. */
  readonly secret: Redacted.Redacted<string>
}

export interface KeyList {
  readonly keys: ReadonlyArray<ApiKey>
  readonly total: number
  readonly limit: number
}

const isKeyId = Schema.is(KeyId)
const invalidKey = new InvalidApiKey({ message: "The API key is missing, malformed, revoked or expired" })

export class ApiKeys extends Context.Tag("@mzk/core/ApiKeys")<ApiKeys, {
  /**
   * Creates an active key. `grantorScopes` are the scopes of whoever asks: a key can never hand
   * out a scope it does not hold itself.
   */
  readonly create: (
    accountId: AccountId,
    input: CreateKeyInput,
    grantorScopes?: ReadonlyArray<Scope>
  ) => Effect.Effect<CreatedKey, InvalidRequest | InsufficientScope | KeyLimitReached | StorageError>
  readonly list: (accountId: AccountId) => Effect.Effect<KeyList, StorageError>
  /** Permanent. Unknown, foreign, revoked and expired ids are all `KeyNotFound`. */
  readonly revoke: (accountId: AccountId, id: string) => Effect.Effect<void, KeyNotFound | StorageError>
  /**
   * A new key with the same name, description, scopes and `expires_at` (unless `input.expires_at`
   * sets another, or null); the old one keeps working for `expires_in` seconds (default 24 h), so
   * clients move over without downtime, and still counts toward the active-key limit until then.
   * A key is rolled once: rolling it again while it still works is `KeyAlreadyRolled` (its
   * successor is the one to roll). Records `key.rolled`.
   */
  readonly roll: (
    accountId: AccountId,
    id: string,
    input: RollKeyInput,
    grantorScopes?: ReadonlyArray<Scope>
  ) => Effect.Effect<CreatedKey, InvalidRequest | KeyNotFound | KeyAlreadyRolled | InsufficientScope | KeyLimitReached | StorageError>
  /** A raw key → its principal. Malformed keys are refused without touching storage. */
  readonly authenticate: (raw: Redacted.Redacted<string>) => Effect.Effect<Principal, InvalidApiKey | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const keys = yield* KeysRepo
      const events = yield* Events
      const audit = yield* AuditLog
      const entropy = yield* Entropy
      const ids = yield* Ids
      const { hash } = yield* ApiKeyHashing

      /** A new key's record and raw value; stored by the caller. */
      const makeKey = (
        accountId: AccountId,
        fields: Pick<ApiKeyRecord, "name" | "description" | "scopes" | "expires_at" | "metadata">,
        createdAt: Timestamp,
        id?: KeyId
      ) =>
        Effect.gen(function*() {
          const secret = yield* generateApiKey(entropy)
          const raw = Redacted.value(secret)
          const record: ApiKeyRecord = {
            id: id ?? (yield* ids.make("key")),
            account_id: accountId,
            ...fields,
            prefix: displayPrefix(raw),
            hash: hash(raw),
            created_at: createdAt,
            last_used_at: null,
            revoked_at: null,
            replaced_by: null
          }
          return { record, secret }
        })

      /** A created key's audit entry: what it was created with, never anything secret. */
      const auditCreated = (record: ApiKeyRecord) =>
        audit.record(record.account_id, "key.created", { type: "api_key", id: record.id, name: record.name }, [
          { field: "name", from: null, to: record.name },
          { field: "description", from: null, to: record.description },
          { field: "scopes", from: null, to: record.scopes },
          { field: "expires_at", from: null, to: record.expires_at }
        ])

      /** A key can never hand out a scope it does not hold itself: not by creating a key, nor by rolling one. */
      const grantable = (scopes: ReadonlyArray<Scope>, grantorScopes: ReadonlyArray<Scope> | undefined) => {
        const ungrantable = grantorScopes === undefined ? [] : scopes.filter((s) => !grantorScopes.includes(s))
        return ungrantable.length === 0
          ? Effect.void
          : Effect.fail(new InsufficientScope({ message: `A key cannot grant scopes its creator lacks: ${ungrantable.join(", ")}` }))
      }

      const create = (accountId: AccountId, body: CreateKeyInput, grantorScopes?: ReadonlyArray<Scope>) =>
        Effect.gen(function*() {
          const limits = yield* Limits
          const scopes = SCOPES.filter((scope) => (body.scopes ?? SCOPES).includes(scope))
          yield* grantable(scopes, grantorScopes)
          const createdAt = yield* now
          const expiresAt = body.expires_at ?? null
          if (expiresAt !== null && expiresAt <= createdAt) {
            return yield* invalidRequest([{ path: "expires_at", message: `must be in the future (it is now ${createdAt})` }])
          }
          const { record, secret } = yield* makeKey(accountId, {
            name: body.name,
            description: body.description ?? null,
            scopes,
            expires_at: expiresAt,
            metadata: metadataOf(body.metadata)
          }, createdAt)
          yield* tx.transaction(Effect.gen(function*() {
            yield* keys.insert(record, { maxActive: limits.maxActiveKeys, now: createdAt })
            yield* auditCreated(record)
            yield* events.record(accountId, "key.created", {
              id: record.id,
              name: record.name,
              description: record.description,
              scopes: record.scopes,
              created_at: record.created_at,
              metadata: record.metadata
            })
          }))
          return { api_key: toApiKey(record), secret }
        })

      const list = (accountId: AccountId) =>
        Effect.flatMap(Effect.zip(Limits, now), ([limits, at]) =>
          Effect.map(keys.listActive(accountId, at), (active) => ({
            keys: active.map(toApiKey),
            total: active.length,
            limit: limits.maxActiveKeys
          })))

      const notFound = (id: string) => new KeyNotFound({ message: `No active key ${JSON.stringify(id)} in this account` })

      const revoke = (accountId: AccountId, id: string) =>
        isKeyId(id)
          ? tx.transaction(Effect.gen(function*() {
            const revokedAt = yield* now
            const revoked = yield* keys.revoke(accountId, id, revokedAt)
            if (Option.isNone(revoked)) return yield* notFound(id)
            yield* audit.record(accountId, "key.revoked", { type: "api_key", id, name: revoked.value.name })
            yield* events.record(accountId, "key.revoked", {
              id,
              name: revoked.value.name,
              revoked_at: revokedAt,
              metadata: revoked.value.metadata
            })
          }))
          : Effect.fail(notFound(id))

      const roll = (accountId: AccountId, id: string, input: RollKeyInput, grantorScopes?: ReadonlyArray<Scope>) =>
        isKeyId(id)
          ? tx.transaction(Effect.gen(function*() {
            const limits = yield* Limits
            const rolledAt = yield* now
            if (input.expires_at != null && input.expires_at <= rolledAt) {
              return yield* invalidRequest([{ path: "expires_at", message: `must be in the future (it is now ${rolledAt})` }])
            }
            const overlapEnds = timestampFromMillis(millisFromTimestamp(rolledAt) + (input.expires_in ?? DEFAULT_ROLL_OVERLAP_SECONDS) * 1000)
            const successorId = yield* ids.make("key")
            // First the old key's end, so an overlap of 0 frees its place under the limit for the new one.
            const outcome = yield* keys.roll(accountId, id, { until: overlapEnds, replacedBy: successorId, now: rolledAt })
            if (outcome._tag === "not_found") return yield* notFound(id)
            if (outcome._tag === "already_rolled") {
              const { expires_at, replaced_by } = outcome.key
              return yield* new KeyAlreadyRolled({
                message: `Key ${id} was already rolled: ${replaced_by} replaces it, and it stops working at ${expires_at}. ` +
                  `Roll ${replaced_by} instead, or revoke ${id} to stop it now`
              })
            }
            const old = outcome.key
            // Refused whole: the transaction takes the old key's new end back too.
            yield* grantable(old.scopes, grantorScopes)
            const { description, metadata, name, scopes } = old
            // A roll replaces the key's secret, not its term: the new key ends when the old one was to, unless told otherwise.
            const expiresAt = input.expires_at === undefined ? outcome.previousExpiresAt : input.expires_at
            const { record, secret } = yield* makeKey(accountId, { name, description, scopes, expires_at: expiresAt, metadata }, rolledAt, successorId)
            yield* keys.insert(record, { maxActive: limits.maxActiveKeys, now: rolledAt })
            // The old key's shortened life, and the key that replaces it.
            yield* audit.record(accountId, "key.rolled", { type: "api_key", id: old.id, name }, [
              { field: "expires_at", from: outcome.previousExpiresAt, to: old.expires_at },
              { field: "replaced_by", from: null, to: record.id }
            ])
            yield* auditCreated(record)
            yield* events.record(accountId, "key.rolled", {
              id: record.id,
              name,
              scopes,
              created_at: rolledAt,
              previous_key_id: old.id,
              previous_key_expires_at: old.expires_at!,
              metadata
            })
            return { api_key: toApiKey(record), secret }
          }))
          : Effect.fail(notFound(id))

      // Every authenticated request runs this: written as plain steps, not a generator.
      const authenticate = (token: Redacted.Redacted<string>): Effect.Effect<Principal, InvalidApiKey | StorageError> => {
        const raw = Redacted.value(token)
        if (!isWellFormedApiKey(raw)) return Effect.fail(invalidKey)
        return Effect.flatMap(keys.findByHash(hash(raw)), (found) =>
          Effect.clockWith((clock): Effect.Effect<Principal, InvalidApiKey | StorageError> => {
            const nowMs = clock.unsafeCurrentTimeMillis()
            if (Option.isNone(found) || !isActiveKey(found.value, timestampFromMillis(nowMs))) return Effect.fail(invalidKey)
            const key = found.value
            const principal: Principal = { account_id: key.account_id, scopes: key.scopes, via: { kind: "api_key", key_id: key.id } }
            return Effect.as(touchIfStale(key, nowMs), principal)
          }))
      }

      // Most requests read `last_used_at` and write nothing; the repository's conditional write
      // keeps concurrent requests (and other processes) to one write per interval. It is
      // bookkeeping: when storage cannot take the write (a full or read-only disk), the request
      // goes on and the failure is logged; the next request after the interval tries again.
      const touchIfStale = (key: ApiKeyRecord, nowMs: number) =>
        Effect.flatMap(Limits, ({ keyLastUsedIntervalMs }): Effect.Effect<unknown> => {
          const staleBefore = timestampFromMillis(nowMs - keyLastUsedIntervalMs + 1)
          if (key.last_used_at !== null && key.last_used_at >= staleBefore) return Effect.void
          return Effect.catchAll(keys.touch(key.id, timestampFromMillis(nowMs), staleBefore), (error) =>
            logStorageFailure("last_used_at not recorded; the request goes on", error, { key_id: key.id }))
        })

      return { create, list, revoke, roll, authenticate }
    })
  )
}
