import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Entropy } from "../kernel/entropy.js"
import { InsufficientScope, InvalidApiKey, type KeyLimitReached, KeyNotFound, type StorageError } from "../kernel/errors.js"
import { type AccountId, Ids, KeyId } from "../kernel/ids.js"
import { Limits } from "../kernel/limits.js"
import type { Principal } from "../kernel/principal.js"
import { SCOPES, type Scope } from "../kernel/scopes.js"
import { Transactor } from "../kernel/transaction.js"
import { now, timestampFromMillis } from "../kernel/time.js"
import { Events } from "../events/service.js"
import { type ApiKey, type ApiKeyRecord, type CreateKeyInput, toApiKey } from "./apiKey.js"
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
const invalidKey = new InvalidApiKey({ message: "The API key is missing, malformed or revoked" })

export class ApiKeys extends Context.Tag("@mzk/core/ApiKeys")<ApiKeys, {
  /**
   * Creates an active key. `grantorScopes` are the scopes of whoever asks: a key can never hand
   * out a scope it does not hold itself.
   */
  readonly create: (
    accountId: AccountId,
    input: CreateKeyInput,
    grantorScopes?: ReadonlyArray<Scope>
  ) => Effect.Effect<CreatedKey, InsufficientScope | KeyLimitReached | StorageError>
  readonly list: (accountId: AccountId) => Effect.Effect<KeyList, StorageError>
  /** Permanent. Unknown, foreign and already revoked ids are all `KeyNotFound`. */
  readonly revoke: (accountId: AccountId, id: string) => Effect.Effect<void, KeyNotFound | StorageError>
  /** A raw key → its principal. Malformed keys are refused without touching storage. */
  readonly authenticate: (raw: Redacted.Redacted<string>) => Effect.Effect<Principal, InvalidApiKey | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const keys = yield* KeysRepo
      const events = yield* Events
      const entropy = yield* Entropy
      const ids = yield* Ids
      const { hash } = yield* ApiKeyHashing

      const create = (accountId: AccountId, body: CreateKeyInput, grantorScopes?: ReadonlyArray<Scope>) =>
        Effect.gen(function*() {
          const limits = yield* Limits
          const scopes = SCOPES.filter((scope) => (body.scopes ?? SCOPES).includes(scope))
          const ungrantable = grantorScopes === undefined ? [] : scopes.filter((s) => !grantorScopes.includes(s))
          if (ungrantable.length > 0) {
            return yield* new InsufficientScope({
              message: `A key cannot grant scopes its creator lacks: ${ungrantable.join(", ")}`
            })
          }
          const secret = yield* generateApiKey(entropy)
          const raw = Redacted.value(secret)
          const record: ApiKeyRecord = {
            id: yield* ids.make("key"),
            account_id: accountId,
            name: body.name,
            description: body.description ?? null,
            prefix: displayPrefix(raw),
            scopes,
            hash: hash(raw),
            created_at: yield* now,
            last_used_at: null,
            revoked_at: null
          }
          yield* tx.transaction(Effect.gen(function*() {
            yield* keys.insert(record, { maxActive: limits.maxActiveKeys })
            yield* events.record(accountId, "key.created", {
              id: record.id,
              name: record.name,
              description: record.description,
              scopes: record.scopes,
              created_at: record.created_at
            })
          }))
          return { api_key: toApiKey(record), secret }
        })

      const list = (accountId: AccountId) =>
        Effect.flatMap(Limits, (limits) =>
          Effect.map(keys.listActive(accountId), (active) => ({
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
            yield* events.record(accountId, "key.revoked", { id, name: revoked.value.name, revoked_at: revokedAt })
          }))
          : Effect.fail(notFound(id))

      // Every authenticated request runs this: written as plain steps, not a generator.
      const authenticate = (token: Redacted.Redacted<string>): Effect.Effect<Principal, InvalidApiKey | StorageError> => {
        const raw = Redacted.value(token)
        if (!isWellFormedApiKey(raw)) return Effect.fail(invalidKey)
        return Effect.flatMap(keys.findByHash(hash(raw)), (found): Effect.Effect<Principal, InvalidApiKey | StorageError> => {
          if (Option.isNone(found) || found.value.revoked_at !== null) return Effect.fail(invalidKey)
          const key = found.value
          const principal: Principal = { account_id: key.account_id, scopes: key.scopes, via: { kind: "api_key", key_id: key.id } }
          return Effect.as(touchIfStale(key), principal)
        })
      }

      // Most requests read `last_used_at` and write nothing; the repository's conditional write
      // keeps concurrent requests (and other processes) to one write per interval.
      const touchIfStale = (key: ApiKeyRecord) =>
        Effect.flatMap(Limits, ({ keyLastUsedIntervalMs }) =>
          Effect.clockWith((clock): Effect.Effect<unknown, StorageError> => {
            const nowMs = clock.unsafeCurrentTimeMillis()
            const staleBefore = timestampFromMillis(nowMs - keyLastUsedIntervalMs + 1)
            if (key.last_used_at !== null && key.last_used_at >= staleBefore) return Effect.void
            return keys.touch(key.id, timestampFromMillis(nowMs), staleBefore)
          }))

      return { create, list, revoke, authenticate }
    })
  )
}
