import { createHmac, timingSafeEqual } from "node:crypto"

export type WebhookSignatureFailure =
  | "missing_header"
  | "missing_timestamp"
  | "missing_signature"
  | "invalid_timestamp"
  | "timestamp_too_old"
  | "timestamp_in_future"
  | "signature_mismatch"

/** Why a webhook request was refused; `reason` names the cause for logs and tests. */
export class WebhookSignatureError extends Error {
  override readonly name = "WebhookSignatureError"
  constructor(readonly reason: WebhookSignatureFailure, message: string) {
    super(message)
  }
}

export interface VerifyOptions {
  /** Oldest acceptable timestamp, in seconds before now (default 300, the spec's tolerance). */
  readonly toleranceSeconds?: number
  /** The receiver's current time: a `Date` or epoch milliseconds. Defaults to the system clock. */
  readonly now?: Date | number
}

/**
 * Checks a `Service-Signature: t=<unix seconds>,v1=<hex>` header the way spec 5.1 tells receivers
 * to: HMAC-SHA256 of `<t>.<raw body>` keyed with the webhook secret, compared in constant time
 * against every `v1` given (several may be present while a secret is rotated), and the timestamp
 * no older than the tolerance. Pass the body exactly as received, before any JSON parsing.
 * Returns the verified timestamp; throws `WebhookSignatureError` naming the cause otherwise.
 */
export const verifyWebhookSignature = (
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  options: VerifyOptions = {}
): { readonly timestamp: number } => {
  const tolerance = options.toleranceSeconds ?? 300
  if (header === undefined || header === null || header.trim() === "") {
    throw new WebhookSignatureError("missing_header", "The Service-Signature header is missing")
  }
  let timestampText: string | undefined
  const signatures: Array<string> = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    if (eq === -1) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t" && timestampText === undefined) timestampText = value
    if (key === "v1" && value !== "") signatures.push(value)
  }
  if (timestampText === undefined) throw new WebhookSignatureError("missing_timestamp", "The signature header has no t= part")
  if (signatures.length === 0) throw new WebhookSignatureError("missing_signature", "The signature header has no v1= part")
  if (!/^\d{1,12}$/.test(timestampText)) {
    throw new WebhookSignatureError("invalid_timestamp", "The signature timestamp is not a number of seconds")
  }
  const timestamp = Number(timestampText)
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === "number" ? options.now : options.now.getTime()
  const age = Math.floor(nowMs / 1000) - timestamp
  if (age > tolerance) {
    throw new WebhookSignatureError("timestamp_too_old", `The signature is ${age} s old, more than the ${tolerance} s tolerance`)
  }
  if (-age > tolerance) {
    throw new WebhookSignatureError("timestamp_in_future", `The signature is dated ${-age} s in the future`)
  }
  const body = typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : Buffer.from(rawBody)
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest()
  const matches = signatures.some((candidate) => {
    if (!/^[0-9a-fA-F]{64}$/.test(candidate)) return false
    return timingSafeEqual(Buffer.from(candidate, "hex"), expected)
  })
  if (!matches) throw new WebhookSignatureError("signature_mismatch", "No v1 signature matches the body and secret")
  return { timestamp }
}
