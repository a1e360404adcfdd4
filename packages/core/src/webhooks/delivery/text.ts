const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** The longest prefix of `text` whose UTF-8 encoding fits `maxBytes`, never splitting a character. */
export const truncateUtf8 = (text: string, maxBytes: number): string => {
  const bytes = encoder.encode(text)
  if (bytes.length <= maxBytes) return text
  let end = maxBytes
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return decoder.decode(bytes.subarray(0, end))
}

export const RESPONSE_BODY_LIMIT_BYTES = 4096
