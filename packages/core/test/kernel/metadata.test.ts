import { describe, expect, it } from "@effect/vitest"
import {
  ListProofsQuery,
  MetadataField,
  MetadataFilter,
  MetadataInput,
  metadataFilterOf,
  metadataKeyProblem,
  metadataOf,
  metadataPatchOf
} from "@mzk/core"
import { Either, ParseResult, Schema } from "effect"

/** What a request carries, as JSON.parse makes it: `__proto__` an own property. */
const parsed = (json: string) => JSON.parse(json) as Record<string, string>

const problems = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => {
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all" })(input)
  return Either.isRight(decoded) ? [] : ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => `${issue.path.join(".")}: ${issue.message}`)
}

const KEY_CHARACTERS = "metadata keys may hold only letters, digits, '_', '-', '.' and ':'"

describe("metadata keys", () => {
  it("hold letters, digits, '_', '-', '.' and ':' only: brackets would make metadata[<key>] ambiguous", () => {
    for (const key of ["a[b]", "a[", "b]", "[]", "a b", "a\"b", "a/b", "é", "a\u0000"]) expect(metadataKeyProblem(key), key).toBe(KEY_CHARACTERS)
    expect(metadataKeyProblem("")).toBe("metadata keys must not be empty")
    expect(metadataKeyProblem("k".repeat(41))).toBe("metadata keys must be at most 40 characters")
    for (const key of ["order", "x.y:z-w_1", "k".repeat(40), "__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expect(metadataKeyProblem(key), key).toBeUndefined()
    }
  })

  it("in a body, a bad key is named at its path", () => {
    expect(problems(MetadataInput, { "a[b]": "v", ok: "v" })).toEqual([`a[b]: ${KEY_CHARACTERS}`])
  })
})

describe("metadata values", () => {
  it("are text every store keeps: a NUL or a lone surrogate is named at its key", () => {
    expect(problems(MetadataInput, { a: "x\u0000", b: "x\ud800", c: "\udc00", ok: "😀 ✓" })).toEqual([
      "a: must not contain the NUL character (U+0000)",
      "b: must not contain a lone surrogate (U+D800 to U+DFFF without its pair), which is not Unicode text",
      "c: must not contain a lone surrogate (U+D800 to U+DFFF without its pair), which is not Unicode text"
    ])
  })

  it("are strings: anything else is named at its key, and a non-object at the field", () => {
    expect(problems(MetadataInput, { n: 5, z: null, o: { a: "b" } })).toEqual([
      "n: Expected string, actual 5",
      "z: Expected string, actual null",
      'o: Expected string, actual {"a":"b"}'
    ])
    for (const input of [["a"], "order=1", null, 5]) expect(problems(MetadataInput, input), JSON.stringify(input)).toEqual([": must be an object of string values"])
  })
})

describe("__proto__ and Object.prototype's other names are keys like any other", () => {
  const sent = parsed('{"__proto__":"p","constructor":"c","toString":"t","order":"1"}')

  it("are decoded, and encoded, as own pairs", () => {
    const decoded = Schema.decodeUnknownSync(MetadataInput)(sent)
    expect(Object.keys(decoded)).toEqual(["__proto__", "constructor", "toString", "order"])
    expect(JSON.parse(JSON.stringify(decoded))).toEqual(sent)
    const encoded = Schema.encodeSync(MetadataField)(JSON.parse(JSON.stringify(decoded)))
    expect(Object.keys(encoded)).toEqual(["__proto__", "constructor", "toString", "order"])
    expect(Object.getPrototypeOf(encoded)).toBeNull()
  })

  it("are stored by a create, merged into a batch's, and patched by an update", () => {
    expect(Object.keys(metadataOf(parsed('{"__proto__":"p","gone":""}')))).toEqual(["__proto__"])
    const batch = metadataOf(parsed('{"__proto__":"batch","tier":"gold"}'))
    expect(JSON.stringify(metadataOf({ ...batch, ...parsed('{"__proto__":"item"}') }))).toBe('{"__proto__":"item","tier":"gold"}')
    expect(JSON.stringify(metadataPatchOf(parsed('{"__proto__":"","constructor":"c"}')))).toBe('{"__proto__":null,"constructor":"c"}')
  })

  it("are pairs of a list's filter, never dropped from it (a filter that lost one matched more)", () => {
    const query = Schema.decodeUnknownSync(ListProofsQuery)({ "metadata[__proto__]": "x", "metadata[order]": "1", limit: "5" })
    expect(JSON.stringify(metadataFilterOf(query))).toBe('{"__proto__":"x","order":"1"}')
    expect(JSON.stringify(metadataFilterOf({ "metadata[__proto__]": "x" }))).toBe('{"__proto__":"x"}')
    expect(JSON.stringify(metadataFilterOf({ "metadata[constructor]": "x" }))).toBe('{"constructor":"x"}')
    expect(metadataFilterOf({ limit: "5" })).toBeUndefined()
  })
})

describe("a list's metadata filter", () => {
  it("names a parameter whose key no record could hold, brackets included", () => {
    expect(problems(ListProofsQuery, { "metadata[a[b]]": "1", "metadata[ok]": "1" })).toEqual([`metadata[a[b]]: ${KEY_CHARACTERS}`])
    expect(problems(ListProofsQuery, { "metadata[]": "1" })).toEqual(["metadata[]: metadata keys must not be empty"])
    expect(problems(ListProofsQuery, { "metadata[order]": "" })).toEqual(["metadata[order]: must not be empty (an empty value is never stored)"])
    expect(problems(ListProofsQuery, { "metadata[order]": "\ud800" })).toEqual([
      "metadata[order]: must not contain a lone surrogate (U+D800 to U+DFFF without its pair), which is not Unicode text"
    ])
  })

  it("holds the same rules as stored keys, pair by pair", () => {
    expect(problems(MetadataFilter, parsed('{"__proto__":"x","a[b]":"1"}'))).toEqual([`a[b]: ${KEY_CHARACTERS}`])
  })
})
