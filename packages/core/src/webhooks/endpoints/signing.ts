import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { Effect, Redacted } from "effect"
import { base64, fromBase64, hex } from "../../kernel/encoding.js"
import type { Entropy } from "../../kernel/entropy.js"
import { millisFromTimestamp } from "../../kernel/time.js"
import type { WebhookRecord } from "./webhook.js"

/**
 * Every delivery is signed twice over, with the same timestamp: mzk's published `Service-Signature`
 * (Stripe's scheme) and the Standard Webhooks headers, so receivers can check it with Stripe's SDK,
 * the `standardwebhooks` libraries or `@mzk/webhooks`. Each scheme carries one signature per live
 * secret, so while a rotation's overlap lasts a receiver holding either secret accepts it.
 */
export const SIGNATURE_HEADER = "Service-Signature"
/** The Standard Webhooks headers (standardwebhooks.com), spelled as its specification does. */
export const STANDARD_WEBHOOK_ID_HEADER = "webhook-id"
export const STANDARD_WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp"
export const STANDARD_WEBHOOK_SIGNATURE_HEADER = "webhook-signature"
export const WEBHOOK_SECRET_PREFIX = "whsec_"

const utf8 = new TextEncoder()

/**
 * Hex HMAC-SHA256 of `<t>.<body>`, keyed with the whole secret string (`whsec_` included), as
 * Stripe-style verifiers compute it.
 */
export const computeSignature = (secret: string, timestamp: number, body: string): string =>
  hex(hmac(sha256, utf8.encode(secret), utf8.encode(`${timestamp}.${body}`)))

/**
 * The `Service-Signature` value: `t=<unix seconds>,v1=<hex>`, with one `v1` per secret, the
 * current one first.
 */
export const signatureHeader = (secrets: string | ReadonlyArray<string>, timestamp: number, body: string): string =>
  [`t=${timestamp}`, ...(typeof secrets === "string" ? [secrets] : secrets).map((secret) => `v1=${computeSignature(secret, timestamp, body)}`)]
    .join(",")

/**
 * Base64 HMAC-SHA256 of `<id>.<t>.<body>`, keyed with the bytes the secret's base64 part (after
 * `whsec_`) encodes: the Standard Webhooks signature.
 */
export const computeStandardSignature = (secret: string, id: string, timestamp: number, body: string): string => {
  const key = fromBase64(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret)
  return base64(hmac(sha256, key, utf8.encode(`${id}.${timestamp}.${body}`)))
}

/**
 * The secrets that sign a delivery made at `nowMs`: the current one, then the one the last
 * rotation replaced while its overlap lasts. An expired previous secret signs nothing.
 */
export const signingSecrets = (
  webhook: Pick<WebhookRecord, "secret" | "previous_secret" | "previous_secret_expires_at">,
  nowMs: number
): ReadonlyArray<string> =>
  webhook.previous_secret !== null && webhook.previous_secret_expires_at !== null &&
    millisFromTimestamp(webhook.previous_secret_expires_at) > nowMs
    ? [webhook.secret, webhook.previous_secret]
    : [webhook.secret]

/**
 * The signature headers of one attempt: `Service-Signature` and the three Standard Webhooks
 * headers (`webhook-signature` holds `v1,<base64>` entries, space separated), all over the same
 * timestamp, one signature per secret in each. `id` is the event's id, the same on every attempt.
 */
export const signatureHeaders = (
  secrets: ReadonlyArray<string>,
  delivery: { readonly id: string; readonly timestamp: number; readonly body: string }
): Record<string, string> => {
  const { body, id, timestamp } = delivery
  return {
    [SIGNATURE_HEADER]: signatureHeader(secrets, timestamp, body),
    [STANDARD_WEBHOOK_ID_HEADER]: id,
    [STANDARD_WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
    [STANDARD_WEBHOOK_SIGNATURE_HEADER]: secrets.map((secret) => `v1,${computeStandardSignature(secret, id, timestamp, body)}`).join(" ")
  }
}

/** A new signing secret: `whsec_` + base64 of 32 random bytes (also the Standard Webhooks format). */
export const generateWebhookSecret = (entropy: Entropy["Type"]): Effect.Effect<Redacted.Redacted<string>> =>
  Effect.map(entropy.bytes(32), (bytes) => Redacted.make(WEBHOOK_SECRET_PREFIX + base64(bytes)))
