import type { RateLimit } from "./rateLimit.js"

/** One field at fault in a 400 `invalid_request`: `path` names it (`inputs.a`, `proofs.3.type`, `sources.0`). */
export interface ErrorDetail {
  readonly path: string
  readonly message: string
}

/**
 * A call that did not succeed. `status` and `code` are the server's (`404 proof_not_found`, `409
 * key_limit_reached`, `429 rate_limit_exceeded`, …); `status` is 0 when no answer came, with
 * `code` `timeout` or `network_error` (the cause in `cause`). `requestId` is what to quote to the
 * operator: their logs carry it.
 */
export class MzkApiError extends Error {
  override readonly name: string = "MzkApiError"
  readonly status: number
  readonly code: string
  readonly requestId: string | undefined
  readonly details: ReadonlyArray<ErrorDetail> | undefined
  /** On a 429: seconds until the policy that was hit resets (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined
  /** On a metered endpoint's error: the rate limits as they stood. */
  readonly rateLimit: RateLimit | undefined

  constructor(fields: {
    readonly status: number
    readonly code: string
    readonly message: string
    readonly requestId?: string | undefined
    readonly details?: ReadonlyArray<ErrorDetail> | undefined
    readonly retryAfterSeconds?: number | undefined
    readonly rateLimit?: RateLimit | undefined
    readonly cause?: unknown
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.status = fields.status
    this.code = fields.code
    this.requestId = fields.requestId
    this.details = fields.details
    this.retryAfterSeconds = fields.retryAfterSeconds
    this.rateLimit = fields.rateLimit
  }
}
