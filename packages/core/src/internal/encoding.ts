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

const base32Small = (value: number, width: number): string => {
  let out = ""
  for (let i = width - 1; i >= 0; i--) out += BASE32[Math.floor(value / 2 ** (5 * i)) % 32]!
  return out
}

/**
 * Fixed-width Crockford base32 of the low 5·width bits of a non-negative integer. Works on numbers
 * ten characters (50 bits) at a time: every id is encoded with it, and per-digit BigInt arithmetic
 * was a measurable part of a request.
 */
export const base32 = (value: bigint, width: number): string =>
  width <= 10
    ? base32Small(Number(BigInt.asUintN(5 * width, value)), width)
    : base32(value >> 50n, width - 10) + base32Small(Number(BigInt.asUintN(50, value)), 10)

export const BASE62_CHARS = "[0-9A-Za-z]"
export const BASE32_CHARS = "[0-9a-hjkmnp-tv-z]"

export const hex = (bytes: Uint8Array): string => {
  let out = ""
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0")
  return out
}

export const base64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}
