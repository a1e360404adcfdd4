import { sha256 } from "@noble/hashes/sha2.js"
import { Context, Effect, Redacted } from "effect"
import { crc32 } from "../kernel/crc32.js"
import { BASE62_CHARS, base62, base62Digits, bytesToBigInt, hex } from "../kernel/encoding.js"
import type { Entropy } from "../kernel/entropy.js"

/**
 * Raw API key: `mzk_` + 43 base62 characters (32 random bytes) + 6 base62 characters of the
 * CRC-32 of those 43. The checksum lets malformed or mistyped keys be refused without a storage
 * read, and gives secret scanners a way to tell real keys from look-alikes.
 */
export const KEY_PREFIX = "mzk_"
const RANDOM_LENGTH = 43
const CHECKSUM_LENGTH = 6
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}(${BASE62_CHARS}{${RANDOM_LENGTH}})(${BASE62_CHARS}{${CHECKSUM_LENGTH}})$`)
/** How many characters of the random part the display prefix shows. */
const DISPLAY_CHARS = 6

// A CRC-32 is below 62^6, so six digits always hold it.
const checksumOf = (random: string): string => base62Digits(crc32(random), CHECKSUM_LENGTH)

/** A new raw key, wrapped in `Redacted` so it cannot slip into a log by accident. */
export const generateApiKey = (entropy: Entropy["Type"]): Effect.Effect<Redacted.Redacted<string>> =>
  Effect.map(entropy.bytes(32), (bytes) => {
    const random = base62(bytesToBigInt(bytes), RANDOM_LENGTH)
    return Redacted.make(KEY_PREFIX + random + checksumOf(random))
  })

/** True when the text has the key format and its checksum matches. Pure; reads nothing. */
export const isWellFormedApiKey = (raw: string): boolean => {
  const match = KEY_PATTERN.exec(raw)
  return match !== null && checksumOf(match[1]!) === match[2]
}

/** What storage keeps instead of the key: SHA-256, hex. */
export const hashApiKey = (raw: string): string => hex(sha256(new TextEncoder().encode(raw)))

/**
 * The SHA-256 that `ApiKeys` hashes keys with, every authenticated request: `hashApiKey` (pure
 * JavaScript, runs anywhere) unless a platform's native one is provided, as the server provides
 * node:crypto's (about 10 µs less per request, measured). Any replacement must give the same text
 * as `hashApiKey`, or stored keys no longer match.
 */
export class ApiKeyHashing extends Context.Reference<ApiKeyHashing>()("@mzk/core/ApiKeyHashing", {
  defaultValue: (): { readonly hash: (raw: string) => string } => ({ hash: hashApiKey })
}) {}

/** The non-secret label shown in listings, e.g. `mzk_4fGh2a`. */
export const displayPrefix = (raw: string): string => raw.slice(0, KEY_PREFIX.length + DISPLAY_CHARS)
