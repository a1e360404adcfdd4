import { Schema } from "effect"

const NUL = "\u0000"

/** C0 controls, DEL and C1 controls: what `TextWithoutControls` and URL path and query values refuse. */
export const hasControlCharacters = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}

/**
 * Text as every store keeps it: the refinement every free-text field that reaches storage is built
 * on. Postgres `text` cannot hold U+0000, which SQLite stores, so a NUL was a 503 on one store and
 * a success on the other; it is refused at the boundary instead, a 400 whose `details[].path`
 * names the field, the same answer on every store. Other characters are kept as sent.
 */
export const StoredText = Schema.String.pipe(
  Schema.filter((text) => !text.includes(NUL) || "must not contain the NUL character (U+0000)", {
    jsonSchema: { pattern: "^[^\\u0000]*$" }
  })
)

/** The problem a value with a control character has, in every place that refuses one. */
export const CONTROL_CHARACTERS_REFUSED = "must not contain control characters"

/**
 * Stored text with no control character at all (C0, DEL, C1), for values in which none has a
 * meaning, such as URLs: a URL parser drops some of them silently (tab, line feeds) and
 * percent-encodes others, so what was stored would not be what is used. The HTTP layer holds every
 * path parameter and query value to the same rule before decoding them.
 */
export const TextWithoutControls = StoredText.pipe(
  Schema.filter((text) => !hasControlCharacters(text) || CONTROL_CHARACTERS_REFUSED, {
    jsonSchema: { pattern: "^[^\\u0000-\\u001f\\u007f-\\u009f]*$" }
  })
)
