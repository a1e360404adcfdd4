import { describe, expect, it } from "@effect/vitest"
import { AccountName, KeyDescription, StoredText, storedTextProblem, unstorableTextIn } from "@mzk/core"
import { Either, Schema } from "effect"
import fc from "fast-check"

const NUL = "must not contain the NUL character (U+0000)"
const SURROGATE = "must not contain a lone surrogate (U+D800 to U+DFFF without its pair), which is not Unicode text"

describe("storedTextProblem: text every store keeps as sent", () => {
  it("refuses a NUL and a lone surrogate, high or low, anywhere", () => {
    for (const text of ["\u0000", "a\u0000", "\u0000b"]) expect(storedTextProblem(text), JSON.stringify(text)).toBe(NUL)
    for (const text of ["\ud800", "a\udbff", "\udc00b", "\udfff", "\ude00\ud83d", "\ud83d\ud83d\ude00"]) {
      expect(storedTextProblem(text), JSON.stringify(text)).toBe(SURROGATE)
    }
  })

  it("keeps paired surrogates, other controls and every other character", () => {
    for (const text of ["", "😀", "a\ud83d\ude00b", "line\nbreak\ttab\u007f\u0085", "ünïcödé 証明", "\ufffd", "\uffff"]) {
      expect(storedTextProblem(text), JSON.stringify(text)).toBeUndefined()
    }
  })

  it("agrees with UTF-8: text is refused exactly when it holds a NUL or does not survive a UTF-8 round trip", () => {
    const utf8 = new TextDecoder("utf-8")
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)) }), (a, b) => {
        const text = a + b
        const keeps = !text.includes("\u0000") && utf8.decode(Buffer.from(text, "utf8")) === text
        expect(storedTextProblem(text) === undefined).toBe(keeps)
      }),
      { numRuns: 200 }
    )
  })

  it("is the rule of StoredText and every field built on it", () => {
    for (const schema of [StoredText, KeyDescription, AccountName]) {
      const decode = Schema.decodeUnknownEither(schema as Schema.Schema<string>)
      expect(Either.isLeft(decode("a\ud800"))).toBe(true)
      expect(Either.isLeft(decode("a\u0000"))).toBe(true)
      expect(decode("a😀")).toEqual(Either.right("a😀"))
    }
  })
})

describe("unstorableTextIn: every string of a JSON value, keys included, at its path", () => {
  it("names each value and each key no store keeps, at any depth, in document order", () => {
    const body = JSON.parse(
      '{"type":"mul\\u0000","inputs":{"a\\ud800":"1","b":["2",["\\udc00"]]},"metadata":{"ok":"😀","note":"x\\u0000"},"n":1,"t":true,"z":null}'
    ) as unknown
    expect(unstorableTextIn(body)).toEqual([
      { path: "type", message: NUL },
      { path: "inputs.a\ud800", message: `a key ${SURROGATE}` },
      { path: "inputs.b.1.0", message: SURROGATE },
      { path: "metadata.note", message: NUL }
    ])
    expect(unstorableTextIn("\u0000")).toEqual([{ path: "", message: NUL }])
    expect(unstorableTextIn({ ok: ["😀", { deeper: "line\nbreak" }], n: 0 })).toEqual([])
  })

  it("keeps the key __proto__ as any other (JSON.parse makes it an own property)", () => {
    expect(unstorableTextIn(JSON.parse('{"__proto__":{"x":"\\u0000"}}'))).toEqual([{ path: "__proto__.x", message: NUL }])
  })

  it("walks any depth without the stack, and names at most 100", () => {
    let deep: unknown = "\u0000"
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(unstorableTextIn(deep)).toEqual([{ path: Array.from({ length: 100_000 }, () => "0").join("."), message: NUL }])
    const many = unstorableTextIn(Array.from({ length: 1_000 }, () => "\u0000"))
    expect(many).toHaveLength(100)
    expect(many[99]).toEqual({ path: "99", message: NUL })
  })
})
