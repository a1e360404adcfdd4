import { Schema } from "effect"
import type { ErrorDetail } from "./errors.js"

const NUL = "\u0000"
/** A UTF-16 surrogate without its pair: with the `u` flag, a paired one is part of one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * Why a store cannot keep `text` as it is, or undefined: the one rule of stored text. Postgres
 * `text` and JSON cannot hold U+0000, which SQLite stores; a lone UTF-16 surrogate (`"\ud800"` in
 * JSON) is no Unicode text, so no UTF-8 encodes it: Postgres refused it in JSON columns and kept
 * U+FFFD in its place in text ones, where SQLite kept it as sent.
 */
export const storedTextProblem = (text: string): string | undefined =>
  text.includes(NUL)
    ? "must not contain the NUL character (U+0000)"
    : LONE_SURROGATE.test(text)
    ? "must not contain a lone surrogate (U+D800 to U+DFFF without its pair), which is not Unicode text"
    : undefined

/** C0 controls, DEL and C1 controls: what `TextWithoutControls` and URL path and query values refuse. */
export const hasControlCharacters = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}

/** At most this many strings are named in one refusal: a body of a million NULs gets a bounded answer. */
const MAX_NAMED = 100

/** Where a value lies: its key and its container's place, so a path is spelled out only for what is named. */
interface Place {
  readonly key: string
  readonly parent: Place | undefined
}

const pathOf = (place: Place | undefined) => {
  const keys: Array<string> = []
  for (let at = place; at !== undefined; at = at.parent) keys.push(at.key)
  return keys.reverse().join(".")
}

/**
 * Every string of a decoded JSON value (`JSON.parse`'s objects and arrays) that a store cannot
 * keep (`storedTextProblem`), object keys included, at its path (`proofs.0.metadata.note`): the
 * first `MAX_NAMED`. Iterative and linear in the value's size, so no nesting depth overflows the
 * stack or costs more than the value's length.
 */
export const unstorableTextIn = (value: unknown): Array<ErrorDetail> => {
  const found: Array<ErrorDetail> = []
  const name = (place: Place | undefined, problem: string) => {
    if (found.length < MAX_NAMED) found.push({ path: pathOf(place), message: problem })
  }
  // Each value with its place, and whether that place is an object's key (checked as text too).
  const stack: Array<readonly [unknown, Place | undefined, boolean]> = [[value, undefined, false]]
  while (stack.length > 0 && found.length < MAX_NAMED) {
    const [item, place, keyed] = stack.pop()!
    const keyProblem = keyed ? storedTextProblem(place!.key) : undefined
    if (keyProblem !== undefined) name(place, `a key ${keyProblem}`)
    if (typeof item === "string") {
      const problem = storedTextProblem(item)
      if (problem !== undefined) name(place, problem)
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], { key: String(i), parent: place }, false])
    } else if (typeof item === "object" && item !== null) {
      const keys = Object.keys(item)
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(item as Record<string, unknown>)[keys[i]!], { key: keys[i]!, parent: place }, true])
    }
  }
  return found
}

/**
 * Text as every store keeps it (`storedTextProblem`): the refinement every free-text field that
 * reaches storage is built on, so a NUL or a lone surrogate is a 400 whose `details[].path` names
 * the field, the same answer on every store, rather than a 503 on one and a success on the other.
 * Other characters are kept as sent. (The HTTP layer holds every string of a request body to the
 * same rule before decoding it, for fields that are looked up rather than stored.)
 */
export const StoredText = Schema.String.pipe(
  Schema.filter((text) => storedTextProblem(text) ?? true, {
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
