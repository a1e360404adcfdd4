import { Context, Effect, Layer, Schema } from "effect"
import { BASE32_CHARS, base32Digits } from "./encoding.js"
import { Entropy } from "./entropy.js"

/**
 * Ids are `<prefix>_` + 26 Crockford base32 characters: 48 bits of milliseconds then 80 random
 * bits (the ULID layout), so ids sort by creation time and serve as stable list cursors.
 */
export const ID_PREFIXES = {
  account: "acct",
  key: "key",
  webhook: "wh",
  event: "evt",
  proof: "proof",
  batch: "batch",
  delivery: "del",
  attempt: "att",
  circuit: "cir",
  request: "req",
  audit: "aud",
  recovery: "rcv",
  verificationKey: "vk"
} as const
export type IdKind = keyof typeof ID_PREFIXES

const idSchema = <B extends string>(prefix: string, brand: B) =>
  Schema.String.pipe(
    Schema.pattern(new RegExp(`^${prefix}_${BASE32_CHARS}{26}$`), {
      // An id of another shape ("proof_nonexistent" begins with "proof_" too) was never issued.
      message: () => `must be an id as mzk issues them: "${prefix}_" and 26 lowercase letters and digits`
    }),
    Schema.brand(brand),
    Schema.annotations({ identifier: brand, description: `Id beginning with \`${prefix}_\`` })
  )

export const AccountId = idSchema(ID_PREFIXES.account, "AccountId")
export type AccountId = typeof AccountId.Type
export const KeyId = idSchema(ID_PREFIXES.key, "KeyId")
export type KeyId = typeof KeyId.Type
export const WebhookId = idSchema(ID_PREFIXES.webhook, "WebhookId")
export type WebhookId = typeof WebhookId.Type
export const EventId = idSchema(ID_PREFIXES.event, "EventId")
export type EventId = typeof EventId.Type
export const ProofId = idSchema(ID_PREFIXES.proof, "ProofId")
export type ProofId = typeof ProofId.Type
export const BatchId = idSchema(ID_PREFIXES.batch, "BatchId")
export type BatchId = typeof BatchId.Type
export const DeliveryId = idSchema(ID_PREFIXES.delivery, "DeliveryId")
export type DeliveryId = typeof DeliveryId.Type
export const RequestId = idSchema(ID_PREFIXES.request, "RequestId")
export type RequestId = typeof RequestId.Type
export const CircuitId = idSchema(ID_PREFIXES.circuit, "CircuitId")
export type CircuitId = typeof CircuitId.Type
/** One HTTP attempt of a delivery, as its log lists it (and a log's cursor). */
export const DeliveryAttemptId = idSchema(ID_PREFIXES.attempt, "DeliveryAttemptId")
export type DeliveryAttemptId = typeof DeliveryAttemptId.Type
export const AuditEntryId = idSchema(ID_PREFIXES.audit, "AuditEntryId")
export type AuditEntryId = typeof AuditEntryId.Type
/** A webhook's recovery: the background job that re-queues its failed deliveries. */
export const RecoveryId = idSchema(ID_PREFIXES.recovery, "RecoveryId")
export type RecoveryId = typeof RecoveryId.Type
/** A verification key registered once (`POST /verification-keys`) and named by id in verifications. */
export const VerificationKeyId = idSchema(ID_PREFIXES.verificationKey, "VerificationKeyId")
export type VerificationKeyId = typeof VerificationKeyId.Type

export interface IdTypes {
  account: AccountId
  key: KeyId
  webhook: WebhookId
  event: EventId
  proof: ProofId
  batch: BatchId
  delivery: DeliveryId
  attempt: DeliveryAttemptId
  circuit: CircuitId
  request: RequestId
  audit: AuditEntryId
  recovery: RecoveryId
  verificationKey: VerificationKeyId
}

const MAX_MILLIS = 2 ** 48 - 1
const HALF = 2 ** 40

/**
 * The 80 random bits of an id as two 40-bit halves, most significant first: plain numbers, since
 * BigInt arithmetic on every id (one per request, for its `Request-Id`) was a measurable cost.
 */
export type RandomBits = readonly [high: number, low: number]

/** The next value of `bits` (monotonic mode), or undefined when all 80 bits are already set. */
const increment = ([high, low]: RandomBits): RandomBits | undefined =>
  low + 1 < HALF ? [high, low + 1] : high + 1 < HALF ? [high + 1, 0] : undefined

/** Ten bytes → two 40-bit halves. */
export const randomBitsFrom = (bytes: Uint8Array, at = 0): RandomBits => {
  let high = 0
  let low = 0
  for (let i = 0; i < 5; i++) {
    high = high * 256 + bytes[at + i]!
    low = low * 256 + bytes[at + 5 + i]!
  }
  return [high, low]
}

/** The id of a kind for a time and 80 random bits. */
export const formatId = <K extends IdKind>(kind: K, millis: number, [high, low]: RandomBits): IdTypes[K] =>
  `${ID_PREFIXES[kind]}_${base32Digits(Math.min(Math.max(0, millis), MAX_MILLIS), 10)}${base32Digits(high, 8)}${base32Digits(low, 8)}` as IdTypes[K]

/**
 * Fresh ids from one `Entropy` and `Clock`. Within one millisecond the random part counts up
 * (ULID's monotonic mode), so ids made in order sort in order even under a `TestClock` that stands
 * still; the last id issued is this maker's own state, so each seeded test entropy starts afresh.
 */
export const makeIdMaker = (entropy: Entropy["Type"]) => {
  let last: { readonly millis: number; readonly random: RandomBits } | undefined
  return <K extends IdKind>(kind: K): Effect.Effect<IdTypes[K]> =>
    Effect.clockWith((clock) => {
      const millis = Math.min(Math.max(0, clock.unsafeCurrentTimeMillis()), MAX_MILLIS)
      const next = last !== undefined && last.millis === millis ? increment(last.random) : undefined
      const issue = (random: RandomBits) => {
        last = { millis, random }
        return formatId(kind, millis, random)
      }
      return next !== undefined ? Effect.succeed(issue(next)) : Effect.map(entropy.bytes(10), (bytes) => issue(randomBitsFrom(bytes)))
    })
}

/** Where every id of the core comes from: one maker over the `Entropy` and `Clock` in context. */
export class Ids extends Context.Tag("@mzk/core/Ids")<Ids, {
  readonly make: <K extends IdKind>(kind: K) => Effect.Effect<IdTypes[K]>
}>() {
  static readonly layer: Layer.Layer<Ids, never, Entropy> = Layer.effect(this, Effect.map(Entropy, (entropy) => ({ make: makeIdMaker(entropy) })))
}

/** A fresh id of the given kind from the `Ids` in context (services hold `Ids` and call `make`). */
export const makeId = <K extends IdKind>(kind: K): Effect.Effect<IdTypes[K], never, Ids> =>
  Effect.flatMap(Ids, (ids) => ids.make(kind))
