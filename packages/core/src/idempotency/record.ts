import type { AccountId } from "../kernel/ids.js"
import type { Timestamp } from "../kernel/time.js"

/** A response as it is replayed: what the first request answered, before per-request headers. */
export interface StoredResponse {
  readonly status: number
  /** Only the response's own headers (`content-type`…); `Request-Id` and the RateLimit fields are per request. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | null
}

/**
 * One `Idempotency-Key` of an account: the request it belongs to (its fingerprint: method, path and
 * body) and, once that request finished, its response. While `response` is null the request is in
 * flight, under a lock that lapses at `locked_until`, so a process that died mid-request does not
 * hold the key until it expires.
 */
export interface IdempotencyRecord {
  readonly account_id: AccountId
  readonly key: string
  readonly fingerprint: string
  /** The `Request-Id` of the request that made the response: replays name it in `Original-Request`. */
  readonly request_id: string
  readonly response: StoredResponse | null
  readonly created_at: Timestamp
  readonly expires_at: Timestamp
  readonly locked_until: Timestamp | null
}
