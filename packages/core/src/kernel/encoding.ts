const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
// Crockford's base32 in lower case: no i, l, o, u, so ids survive being read aloud or retyped.
const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"

/** Fixed-width base62 of a non-negative integer, left-padded with "0". */
export const base62 = (value: bigint, width: number): string => {
  let out = ""
  let rest = value
  while (rest > 0n) {
    out = BASE62[Number(rest % 62n)]! + out
    rest /= 62n
  }
  if (out.length > width) throw new RangeError(`value does not fit ${width} base62 digits`)
  return out.padStart(width, "0")
}

export const bytesToBigInt = (bytes: Uint8Array): bigint => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return value
}

/** Every 10-bit number as its two base32 digits: ids are spelled two digits at a time. */
const BASE32_PAIRS = Array.from({ length: 1024 }, (_, n) => BASE32[n >> 5]! + BASE32[n & 31]!)

/**
 * Fixed-width Crockford base32 of a non-negative integer below 2^(5·width), for an even width of
 * at most 10 (every id is spelled with it, so it works on numbers rather than BigInt).
 */
export const base32Digits = (value: number, width: number): string => {
  let out = ""
  for (let pair = width / 2 - 1; pair >= 0; pair--) out += BASE32_PAIRS[Math.floor(value / 2 ** (10 * pair)) % 1024]!
  return out
}

/** Fixed-width base62 of a non-negative safe integer, left-padded with "0". */
export const base62Digits = (value: number, width: number): string => {
  let out = ""
  for (let rest = value; out.length < width; rest = Math.floor(rest / 62)) out = BASE62[rest % 62]! + out
  return out
}

export const BASE62_CHARS = "[0-9A-Za-z]"
export const BASE32_CHARS = "[0-9a-hjkmnp-tv-z]"

const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))

// A key is hashed on every authenticated request: two strings per byte were most of its garbage.
export const hex = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i++) out += HEX_PAIRS[bytes[i]!]!
  return out
}

export const base64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** The bytes of standard base64 text; throws on text that is not base64. */
export const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
