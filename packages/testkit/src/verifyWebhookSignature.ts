import { verifySignature, type VerifyOptions, WebhookVerificationError } from "@mzk/webhooks"

export type { VerifyOptions } from "@mzk/webhooks"

/** `@mzk/webhooks`' codes, the tolerance failure split by direction for the suites that assert it. */
export type WebhookSignatureFailure =
  | "missing_header"
  | "malformed_header"
  | "timestamp_too_old"
  | "timestamp_in_future"
  | "signature_mismatch"

/**
 * Why a webhook request was refused, as the repo's suites assert it (`reason`). A
 * `WebhookVerificationError`, so code written against `@mzk/webhooks` catches it too.
 */
export class WebhookSignatureError extends WebhookVerificationError {
  override readonly name: string = "WebhookSignatureError"
  constructor(readonly reason: WebhookSignatureFailure, cause: WebhookVerificationError) {
    super(cause.code, cause.message, cause.timestamp)
  }
}

/**
 * `@mzk/webhooks`' `verifySignature`, the one implementation of the receiver's rule, with the
 * refusal's `reason` for assertions. Production receivers use `@mzk/webhooks` itself.
 */
export const verifyWebhookSignature = (
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  options: VerifyOptions = {}
): { readonly timestamp: number } => {
  try {
    return verifySignature(rawBody, header, secret, options)
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    throw new WebhookSignatureError(reasonOf(error, options), error)
  }
}

const reasonOf = (error: WebhookVerificationError, options: VerifyOptions): WebhookSignatureFailure => {
  if (error.code === "invalid_payload") return "malformed_header" // verifySignature never reads the payload
  if (error.code !== "timestamp_out_of_tolerance") return error.code
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime()
  return (error.timestamp ?? 0) * 1000 <= nowMs ? "timestamp_too_old" : "timestamp_in_future"
}
