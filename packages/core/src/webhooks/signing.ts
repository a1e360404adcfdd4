import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { Effect, Redacted } from "effect"
import { base64, hex } from "../kernel/encoding.js"
import type { Entropy } from "../kernel/entropy.js"

export const SIGNATURE_HEADER = "Service-Signature"
export const WEBHOOK_SECRET_PREFIX = "whsec_"

const utf8 = new TextEncoder()

/**
 * Hex HMAC-SHA256 of `<t>.<body>`, keyed with the whole secret string (`whsec_` included), as
 * Stripe-style verifiers compute it.
 */
export const computeSignature = (secret: string, timestamp: number, body: string): string =>
  hex(hmac(sha256, utf8.encode(secret), utf8.encode(`${timestamp}.${body}`)))

/** The `Service-Signature` value: `t=<unix seconds>,v1=<hex>`. */
export const signatureHeader = (secret: string, timestamp: number, body: string): string =>
  `t=${timestamp},v1=${computeSignature(secret, timestamp, body)}`

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export const generateWebhookSecret = (entropy: Entropy["Type"]): Effect.Effect<Redacted.Redacted<string>> =>
  Effect.map(entropy.bytes(32), (bytes) => Redacted.make(WEBHOOK_SECRET_PREFIX + base64(bytes)))
