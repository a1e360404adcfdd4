import { sha256 } from "@noble/hashes/sha2.js"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { hex } from "../kernel/encoding.js"
import { IdempotencyKeyInUse, IdempotencyKeyReused, type StorageError } from "../kernel/errors.js"
import type { AccountId } from "../kernel/ids.js"
import { now, timestampFromMillis } from "../kernel/time.js"
import { sweepForever } from "../kernel/sweep.js"
import { IdempotencyConfig } from "./config.js"
import type { StoredResponse } from "./record.js"
import { IdempotencyRepo } from "./repo.js"

/** Stripe's bound: a key is 1 to 255 characters; printable ASCII, so it survives every proxy and log. */
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/

/** Why an `Idempotency-Key` header cannot be used, or undefined when it can. */
export const idempotencyKeyProblem = (key: string): string | undefined =>
  KEY_PATTERN.test(key) ? undefined : "must be 1 to 255 printable ASCII characters, without leading or trailing spaces"

/**
 * What a key is bound to: the method, the path and the body, hashed. The same key with another
 * fingerprint is another request, refused rather than answered with the first one's response.
 */
export const requestFingerprint = (method: string, path: string, body: string): string =>
  hex(sha256(new TextEncoder().encode(`${method} ${path}\n${body}`)))

export type Begun =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Replay"; readonly response: StoredResponse; readonly original_request_id: string }

/**
 * Idempotent requests, Stripe's rules: the first request with a key claims it and its response is
 * kept for `ttlMs` (24 h) per account and key; a retry with the same key and request gets that
 * response again, without running (so it costs no rate limit or quota); the same key with another
 * request is refused, as is a retry while the first is still in flight. The claim is storage's, so
 * this holds across processes sharing a database.
 */
export class Idempotency extends Context.Tag("@mzk/core/Idempotency")<Idempotency, {
  readonly begin: (
    accountId: AccountId,
    key: string,
    fingerprint: string,
    requestId: string
  ) => Effect.Effect<Begun, IdempotencyKeyReused | IdempotencyKeyInUse | StorageError>
  /** Keeps the response of the request that claimed the key. */
  readonly finish: (accountId: AccountId, key: string, requestId: string, response: StoredResponse) => Effect.Effect<void, StorageError>
  /** Frees the key: the request's result is not one to replay (rate-limited, stopped, unavailable). */
  readonly abandon: (accountId: AccountId, key: string, requestId: string) => Effect.Effect<void, StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const repo = yield* IdempotencyRepo
      const config = yield* IdempotencyConfig
      const begin = (accountId: AccountId, key: string, fingerprint: string, requestId: string) =>
        Effect.gen(function*() {
          const nowMs = yield* Clock.currentTimeMillis
          const held = yield* repo.claim({
            account_id: accountId,
            key,
            fingerprint,
            request_id: requestId,
            response: null,
            created_at: timestampFromMillis(nowMs),
            expires_at: timestampFromMillis(nowMs + config.ttlMs),
            locked_until: timestampFromMillis(nowMs + config.lockMs)
          }, timestampFromMillis(nowMs))
          if (Option.isNone(held)) return { _tag: "Claimed" } as const
          const record = held.value
          if (record.fingerprint !== fingerprint) {
            return yield* new IdempotencyKeyReused({
              message: "This Idempotency-Key was used in the last 24 hours with a different request (method, path or body); use a new key for a new request"
            })
          }
          if (record.response === null) {
            return yield* new IdempotencyKeyInUse({
              message: "A request with this Idempotency-Key is still in progress; retry once it has finished"
            })
          }
          return { _tag: "Replay", response: record.response, original_request_id: record.request_id } as const
        })
      return {
        begin,
        finish: (accountId, key, requestId, response) =>
          Effect.flatMap(repo.settle(accountId, key, requestId, response), (kept) =>
            kept
              ? Effect.void
              // The request outlived its lock and another took the key over: retries get that one's answer.
              : Effect.annotateLogs(Effect.logWarning("idempotency: a response was not kept, its key was taken over"), {
                account_id: accountId,
                request_id: requestId
              })),
        abandon: (accountId, key, requestId) => Effect.asVoid(repo.release(accountId, key, requestId))
      }
    })
  )
}

/** Deletes expired keys: at start, then every `sweepIntervalMs`. */
export const IdempotencySweeper = Layer.scopedDiscard(
  Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const config = yield* IdempotencyConfig
    yield* sweepForever("idempotency key sweep", Effect.flatMap(now, repo.deleteExpired), config.sweepIntervalMs)
  })
)
