import { Buffer } from "node:buffer"
import { createHmac, timingSafeEqual } from "node:crypto"
import { isEventType, type MzkEvent } from "./events.js"

/** The header every delivery carries: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = "Service-Signature"

/** The spec's receiver tolerance: a signature more than this many seconds from now is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300

export type WebhookVerificationErrorCode =
  | "missing_header"
  | "malformed_header"
  | "timestamp_out_of_tolerance"
  | "signature_mismatch"
  | "invalid_payload"

/**
 * A delivery that must not be trusted: answer it with a 4xx. `code` is stable, for logs and
 * branches; `message` says what was wrong without echoing the secret or expected signature.
 */
export class WebhookVerificationError extends Error {
  override readonly name: string = "WebhookVerificationError"
  readonly code: WebhookVerificationErrorCode
  /** The header's `t`, where it could be read: how far off a receiver's clock is, for logs. */
  readonly timestamp: number | undefined

  constructor(code: WebhookVerificationErrorCode, message: string, timestamp?: number) {
    super(message)
    this.code = code
    this.timestamp = timestamp
  }
}

export interface VerifyOptions {
  /** Seconds a signature's `t` may be from now, either way (default 300). `Infinity` turns the check off. */
  readonly toleranceSeconds?: number
  /** The receiver's current time, a `Date` or epoch milliseconds; the system clock by default. */
  readonly now?: Date | number
}

export interface ParsedSignatureHeader {
  readonly timestamp: number
  /** Every `v1` value, in order: more than one while a secret is rotated. */
  readonly signatures: ReadonlyArray<string>
}

/** The body exactly as received: a string, or bytes (a Node `Buffer` is a `Uint8Array`). */
export type RawBody = string | Uint8Array

/**
 * Reads `t=<seconds>,v1=<hex>[,v1=<hex>…]`. Schemes other than `v1` are skipped, so a future
 * scheme sent alongside does not break today's receivers; a missing or repeated `t`, or no `v1`,
 * makes the header malformed.
 */
export const parseSignatureHeader = (header: string | null | undefined): ParsedSignatureHeader => {
  if (header === undefined || header === null || header.trim() === "") {
    throw new WebhookVerificationError("missing_header", `The ${SIGNATURE_HEADER} header is missing`)
  }
  let timestampText: string | undefined
  const signatures: Array<string> = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    if (eq === -1) throw new WebhookVerificationError("malformed_header", `The ${SIGNATURE_HEADER} header has a part without '='`)
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t") {
      if (timestampText !== undefined) throw new WebhookVerificationError("malformed_header", `The ${SIGNATURE_HEADER} header has more than one t=`)
      timestampText = value
    } else if (key === "v1") {
      signatures.push(value)
    }
  }
  if (timestampText === undefined) throw new WebhookVerificationError("malformed_header", `The ${SIGNATURE_HEADER} header has no t=`)
  // 12 digits reach the year 33658: a longer number is not a time, and Number() would round it.
  if (!/^\d{1,12}$/.test(timestampText)) {
    throw new WebhookVerificationError("malformed_header", `The ${SIGNATURE_HEADER} timestamp is not a number of seconds`)
  }
  if (signatures.length === 0) throw new WebhookVerificationError("malformed_header", `The ${SIGNATURE_HEADER} header has no v1=`)
  return { timestamp: Number(timestampText), signatures }
}

const bytesOf = (rawBody: RawBody): Buffer => {
  if (typeof rawBody === "string") return Buffer.from(rawBody, "utf8")
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength)
  // A parsed body cannot be checked: its bytes are gone. Thrown as a TypeError, not a verification
  // failure, so the receiver answers 500 and mzk retries the delivery once the setup is fixed.
  throw new TypeError(
    "rawBody must be the request body exactly as received (a string or a Buffer/Uint8Array), not a parsed object: " +
      "read it before any JSON body parser runs, e.g. express.raw({ type: \"application/json\" })"
  )
}

const checkSecret = (secret: string) => {
  // An empty key would make every signature computable by anyone: a configuration error, not a bad request.
  if (typeof secret !== "string" || secret === "") throw new TypeError("secret must be the webhook's signing secret (whsec_…)")
}

const nowMillis = (now: Date | number | undefined): number =>
  now === undefined ? Date.now() : typeof now === "number" ? now : now.getTime()

/**
 * Checks a delivery's `Service-Signature` header against the raw body: HMAC-SHA256 of
 * `<t>.<body>`, keyed with the whole secret (`whsec_…` included), compared in constant time with
 * each `v1` (any may match, so deliveries signed with either secret pass while one is rotated);
 * then `t` within `toleranceSeconds` of now, either way, which bounds how long a captured request
 * can be replayed. Returns the signed timestamp; throws `WebhookVerificationError` otherwise.
 */
export const verifySignature = (
  rawBody: RawBody,
  header: string | null | undefined,
  secret: string,
  options: VerifyOptions = {}
): { readonly timestamp: number } => {
  checkSecret(secret)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (!(tolerance >= 0)) throw new RangeError("toleranceSeconds must be a number ≥ 0")
  const body = bytesOf(rawBody)
  const { signatures, timestamp } = parseSignatureHeader(header)
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest()
  const matches = signatures.some((candidate) =>
    // Only a well-formed candidate is compared, so both buffers are 32 bytes as timingSafeEqual needs;
    // the format check reveals nothing about the expected value.
    /^[0-9a-fA-F]{64}$/.test(candidate) && timingSafeEqual(Buffer.from(candidate, "hex"), expected)
  )
  // The signature is checked before the time: a stale request with a bad signature is a forgery,
  // and one with a good signature tells its receiver that its clock or its queue is late.
  if (!matches) throw new WebhookVerificationError("signature_mismatch", "No v1 signature matches the body and secret", timestamp)
  const age = Math.floor(nowMillis(options.now) / 1000) - timestamp
  if (Math.abs(age) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      age > 0
        ? `The signature is ${age} s old, more than the ${tolerance} s tolerance`
        : `The signature is dated ${-age} s ahead, more than the ${tolerance} s tolerance`,
      timestamp
    )
  }
  return { timestamp }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Verifies a delivery (`verifySignature`) and returns its event, typed by `type`. Only a verified
 * body is parsed. Throws `WebhookVerificationError` with `invalid_payload` when a verified body is
 * not an mzk event, e.g. of a type this version of `@mzk/webhooks` does not know.
 */
export const constructEvent = (
  rawBody: RawBody,
  header: string | null | undefined,
  secret: string,
  options: VerifyOptions = {}
): MzkEvent => {
  verifySignature(rawBody, header, secret, options)
  let parsed: unknown
  try {
    parsed = JSON.parse(typeof rawBody === "string" ? rawBody : utf8.decode(rawBody))
  } catch {
    throw new WebhookVerificationError("invalid_payload", "The body is not UTF-8 JSON")
  }
  if (!isRecord(parsed)) throw new WebhookVerificationError("invalid_payload", "The body is not a JSON object")
  const { created_at, data, id, type } = parsed
  if (typeof id !== "string" || !id.startsWith("evt_")) throw new WebhookVerificationError("invalid_payload", "The event has no evt_ id")
  if (!isEventType(type)) {
    throw new WebhookVerificationError(
      "invalid_payload",
      `Unknown event type ${JSON.stringify(type)}: upgrade @mzk/webhooks to receive it`
    )
  }
  if (typeof created_at !== "string") throw new WebhookVerificationError("invalid_payload", "The event has no created_at")
  if (!isRecord(data)) throw new WebhookVerificationError("invalid_payload", "The event has no data object")
  return parsed as unknown as MzkEvent
}
