import { Array as Arr, ParseResult, Schema, SchemaAST as AST } from "effect"
import { storedTextProblem } from "./text.js"

/**
 * Metadata: an application's own key-value pairs on a record (proof, key, webhook, circuit; a
 * batch's are copied onto its proofs), returned on the record and in every event about it, so an
 * application matches a `proof.completed` to its own records without storing mzk's ids first.
 *
 * Stripe's limits: at most 50 keys, a key at most 40 characters, a value a string of at most 500.
 * Keys hold letters, digits, `_`, `-`, `.` and `:` only: that keeps `[` and `]` out (a filter names
 * a key as `metadata[<key>]` in a query string) and keeps quotes, spaces and controls out of the
 * JSON paths and containment documents a store matches keys with. Values are any text a store
 * keeps (`storedTextProblem`: no NUL, no lone surrogate).
 *
 * Every key the rule allows is a key like any other, `__proto__` and `constructor` included, as
 * Stripe keeps them: metadata is built without a prototype (`pairsFrom`), where an assignment of
 * `__proto__` to a plain object would set its prototype and lose the pair.
 *
 * An empty value means "no such key" (Stripe's rule): on an update it deletes the key, at creation
 * the key is simply not stored, so a record never holds an empty value.
 */
export const MAX_METADATA_KEYS = 50
export const MAX_METADATA_KEY_LENGTH = 40
export const MAX_METADATA_VALUE_LENGTH = 500

const KEY_PATTERN = /^[A-Za-z0-9_.:-]+$/

export type Metadata = Readonly<Record<string, string>>

/** Each key's problem, or none: the one rule for keys, of a body and of a list filter alike. */
export const metadataKeyProblem = (key: string): string | undefined =>
  key.length === 0
    ? "metadata keys must not be empty"
    : key.length > MAX_METADATA_KEY_LENGTH
    ? `metadata keys must be at most ${MAX_METADATA_KEY_LENGTH} characters`
    : KEY_PATTERN.test(key)
    ? undefined
    : "metadata keys may hold only letters, digits, '_', '-', '.' and ':'"

const valueProblem = (value: string): string | undefined =>
  value.length > MAX_METADATA_VALUE_LENGTH
    ? `metadata values must be at most ${MAX_METADATA_VALUE_LENGTH} characters`
    : storedTextProblem(value)

/** Pairs without a prototype, so that every key, `__proto__` too, is an own property of the object made. */
export const pairsFrom = <V>(entries: Iterable<readonly [string, V]>): Record<string, V> => {
  const pairs: Record<string, V> = Object.create(null)
  for (const [key, value] of entries) pairs[key] = value
  return pairs
}

const tooMany = (count: number) => `metadata may hold at most ${MAX_METADATA_KEYS} keys, got ${count}`

/**
 * Every problem of a metadata object, each at the path of its key (`metadata.<key>`), the count at
 * `metadata` itself. The 50-key limit counts only what would be stored.
 */
const problems = (metadata: Metadata) => {
  const issues: Array<{ path: ReadonlyArray<string>; message: string }> = []
  let stored = 0
  for (const [key, value] of Object.entries(metadata)) {
    const problem = metadataKeyProblem(key) ?? valueProblem(value)
    if (problem !== undefined) issues.push({ path: [key], message: problem })
    if (value !== "") stored++
  }
  if (stored > MAX_METADATA_KEYS) issues.push({ path: [], message: tooMany(stored) })
  return issues
}

const NOT_AN_OBJECT = "must be an object of string values"

/**
 * An object's own pairs, each value a string, copied without a prototype. Schema's `Record` builds
 * its output with assignments to `{}`, which drop a key `__proto__` (JSON.parse makes it an own
 * property): the pairs were decoded, stored and encoded without it, so this is declared instead.
 */
const ownPairs = (input: unknown, _options: AST.ParseOptions, ast: AST.Declaration) => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return ParseResult.fail(new ParseResult.Type(ast, input, NOT_AN_OBJECT))
  }
  const issues: Array<ParseResult.ParseIssue> = []
  const pairs: Record<string, string> = Object.create(null)
  for (const key of Object.keys(input)) {
    const value = (input as Record<string, unknown>)[key]
    if (typeof value === "string") pairs[key] = value
    else issues.push(new ParseResult.Pointer(key, input, new ParseResult.Type(AST.stringKeyword, value)))
  }
  return Arr.isNonEmptyArray(issues) ? ParseResult.fail(new ParseResult.Composite(ast, input, issues)) : ParseResult.succeed(pairs as Metadata)
}

/** A string-valued object as its own pairs (`ownPairs`), both ways: what metadata and its filter are made of. */
const StringPairs = Schema.declare([], { decode: () => ownPairs, encode: () => ownPairs }, {
  jsonSchema: { type: "object", required: [], properties: {}, additionalProperties: { type: "string" } },
  arbitrary: () => (fc) =>
    fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.:-]{1,40}$/), fc.string({ maxLength: 20 }), { maxKeys: 5, noNullPrototype: false })
      .map((pairs) => pairsFrom(Object.entries(pairs)) as Metadata)
})

/** An object of string values within the limits: what a request may carry and a record holds. */
const MetadataObject = StringPairs.pipe(
  Schema.filter((metadata) => {
    const issues = problems(metadata)
    return issues.length === 0 ? undefined : issues
  }, {
    jsonSchema: {
      maxProperties: MAX_METADATA_KEYS,
      propertyNames: { maxLength: MAX_METADATA_KEY_LENGTH, pattern: KEY_PATTERN.source },
      additionalProperties: { type: "string", maxLength: MAX_METADATA_VALUE_LENGTH }
    }
  })
)

/**
 * The `metadata` a request carries. The one schema every resource's create and update body uses;
 * `metadataOf` turns it into what is stored.
 */
export const MetadataInput = MetadataObject.annotations({
  identifier: "MetadataInput",
  description: `Your own key-value pairs: at most ${MAX_METADATA_KEYS} keys of at most ${MAX_METADATA_KEY_LENGTH} characters ` +
    `(letters, digits, '_', '-', '.', ':'; any such key, \`__proto__\` included), each value a string of at most ` +
    `${MAX_METADATA_VALUE_LENGTH} characters (no NUL or lone surrogate). An empty ` +
    "value stores nothing (on an update, it deletes the key). Returned on the record and in every event about it"
})

/**
 * Metadata as a record and its events carry it: `{}` when none was set. The same limits as the
 * input (so the document and the generated types name one shape), which it always meets.
 */
export const MetadataField = MetadataObject.annotations({
  identifier: "Metadata",
  description: "Your own key-value pairs, as set on create or update; `{}` when none"
})

/** What a create stores: the pairs with a value (an empty value means no such key); `{}` for none. */
export const metadataOf = (input: Metadata | undefined): Metadata =>
  pairsFrom(Object.entries(input ?? {}).filter(([, value]) => value !== ""))

/**
 * An update's metadata as storage lays it over the stored pairs, in the update's own write (so two
 * concurrent updates of different keys both land): a key with a value is set, a key with null
 * deleted, keys absent kept. As a JSON merge patch (RFC 7396) of a flat object.
 */
export type MetadataPatch = Readonly<Record<string, string | null>>

/** An update's `metadata` (Stripe's rule: `""` deletes the key) → the patch storage applies. */
export const metadataPatchOf = (update: Metadata): MetadataPatch =>
  pairsFrom(Object.entries(update).map(([key, value]) => [key, value === "" ? null : value]))

/** The count's problem of merged metadata, or none: checked after the merge, which is then undone if it fails. */
export const metadataCountProblem = (metadata: Metadata): string | undefined => {
  const count = Object.keys(metadata).length
  return count > MAX_METADATA_KEYS ? tooMany(count) : undefined
}

/**
 * A list's metadata filter (`?metadata[order]=123`): exact matches, every pair must hold. Keys follow
 * the same rule as stored keys (a key no record can hold would match nothing, so it is refused).
 */
export const MetadataFilter = StringPairs.pipe(
  Schema.filter((filter) => {
    const issues = Object.entries(filter).flatMap(([key, value]) => {
      const problem = metadataKeyProblem(key) ??
        (value === "" ? "must not be empty (an empty value is never stored)" : valueProblem(value))
      return problem === undefined ? [] : [{ path: [key], message: problem }]
    })
    if (Object.keys(filter).length > MAX_METADATA_KEYS) issues.push({ path: [], message: `at most ${MAX_METADATA_KEYS} metadata filters` })
    return issues.length === 0 ? undefined : issues
  })
)
