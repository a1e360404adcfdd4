import { type Digest, InvalidRequest, StorageError } from "@mzk/core"
import { Effect, Exit } from "effect"
import { createHash } from "node:crypto"
import type { Readable } from "node:stream"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Form, type FormSpec, makeFormParser, type StagePart } from "../../src/wire/multipart.js"
import { multipart } from "../helpers.js"

const SPEC: FormSpec = {
  parts: new Map([
    ["name", { file: false, repeated: false }],
    ["main", { file: true, repeated: false }],
    ["sources", { file: true, repeated: true }]
  ]),
  maxParts: 5,
  maxFieldBytes: 32
}

const encoder = new TextEncoder()

/** Parses `body` fed in the given chunk sizes (cycled), as a transport hands it over. */
const parse = (contentType: string, body: Uint8Array, sizes: ReadonlyArray<number> = [body.length || 1]) => {
  const parser = makeFormParser(contentType, SPEC)
  for (let at = 0, i = 0; at < body.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length]!)
    parser.write(body.subarray(at, at + size))
    at += size
  }
  return Effect.runPromise(Effect.either(parser.end)).then((result) => (result._tag === "Left" ? result.left : result.right))
}

const text = (form: Form | InvalidRequest | StorageError) => {
  if (form instanceof InvalidRequest || form instanceof StorageError) return form
  return Object.fromEntries(Object.entries(form).map(([k, v]) => {
    const show = (x: unknown) => (typeof x === "string" ? x : { ...(x as object), bytes: new TextDecoder().decode((x as { bytes: Uint8Array }).bytes) })
    return [k, Array.isArray(v) ? v.map(show) : show(v)]
  }))
}

const FORM = multipart([
  { name: "name", value: "sum" },
  { name: "main", filename: "sum.circom", value: "template T() {}\r\n--not-a-boundary\r\n" },
  { name: "sources", filename: "lib/a.circom", contentType: "text/plain", value: "a" },
  { name: "sources", filename: "lib/b.circom", value: "" }
])

describe("the multipart form parser", () => {
  it("reads fields as text and files as bytes with their filename and type, repeated parts as arrays", async () => {
    expect(text(await parse(FORM.headers["content-type"], encoder.encode(FORM.body)))).toEqual({
      name: "sum",
      main: { filename: "sum.circom", contentType: "text/plain", bytes: "template T() {}\r\n--not-a-boundary\r\n" },
      sources: [
        { filename: "lib/a.circom", contentType: "text/plain", bytes: "a" },
        { filename: "lib/b.circom", contentType: "text/plain", bytes: "" }
      ]
    })
  })

  // The parser multipasta 0.2.8 failed some of these splits (a part's leading CRLF or headers cut in two).
  it("gives the same form however the body is split into chunks", async () => {
    const body = encoder.encode(FORM.body)
    const whole = text(await parse(FORM.headers["content-type"], body))
    expect(whole).not.toBeInstanceOf(InvalidRequest)
    for (let at = 1; at < body.length; at++) expect(text(await parse(FORM.headers["content-type"], body, [at, body.length]))).toEqual(whole)
    for (let size = 1; size <= 16; size++) expect(text(await parse(FORM.headers["content-type"], body, [size]))).toEqual(whole)
    await fc.assert(fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }), async (sizes) => {
      expect(text(await parse(FORM.headers["content-type"], body, sizes))).toEqual(whole)
    }))
  })

  it("refuses, naming the part: unknown parts, fields sent as files and files as fields, a field too long or not text, too many parts", async () => {
    const refused = async (parts: Parameters<typeof multipart>[0]) => {
      const { body, headers } = multipart(parts)
      const result = await parse(headers["content-type"], encoder.encode(body))
      expect(result).toBeInstanceOf(InvalidRequest)
      return (result as InvalidRequest).details?.map((d) => d.path)
    }
    expect(await refused([{ name: "other", value: "x" }])).toEqual(["other"])
    expect(await refused([{ name: "other", filename: "x.bin", value: "x" }])).toEqual(["other"])
    expect(await refused([{ name: "name", filename: "name.txt", value: "x" }])).toEqual(["name"])
    expect(await refused([{ name: "main", value: "x" }])).toEqual(["main"])
    expect(await refused([{ name: "name", value: "x".repeat(33) }])).toEqual(["name"])
    expect(await refused([{ name: "name", contentType: "application/json", value: "{}" }])).toEqual(["name"])
    expect(await refused([{ name: "name", value: "a" }, { name: "name", value: "b" }])).toEqual(["name"])
    expect(await refused(Array.from({ length: 6 }, () => ({ name: "sources", filename: "a", value: "x" })))).toEqual(["body"])
  })

  it("refuses a body without a boundary, cut short, or with malformed part headers", async () => {
    const { body, headers } = multipart([{ name: "name", value: "x" }])
    for (const [contentType, sent] of [
      ["multipart/form-data", body],
      [headers["content-type"], body.slice(0, -10)],
      [headers["content-type"], ""],
      [headers["content-type"], "--mzk-test-boundary-7MA4YWxk\r\nno colon here\r\n\r\nx\r\n--mzk-test-boundary-7MA4YWxk--\r\n"]
    ] as const) {
      const result = await parse(contentType, encoder.encode(sent))
      expect(result, sent.slice(0, 60)).toBeInstanceOf(InvalidRequest)
      expect((result as InvalidRequest).details?.map((d) => d.path)).toEqual(["body"])
    }
  })

  it("keeps paths in filenames and decodes filename* (RFC 5987) and UTF-8 filenames", async () => {
    const { headers } = multipart([])
    const body = "--mzk-test-boundary-7MA4YWxk\r\nContent-Disposition: form-data; name=\"main\"; filename*=UTF-8''lib%2F%C3%BC.circom\r\n\r\nx\r\n" +
      "--mzk-test-boundary-7MA4YWxk\r\nContent-Disposition: form-data; name=\"sources\"; filename=\"dir/ö.circom\"\r\n\r\ny\r\n--mzk-test-boundary-7MA4YWxk--\r\n"
    const form = (await parse(headers["content-type"], encoder.encode(body))) as Form
    expect((form.main as { filename: string }).filename).toBe("lib/ü.circom")
    expect((form.sources as Array<{ filename: string }>)[0]!.filename).toBe("dir/ö.circom")
  })

  describe("a staged part", () => {
    const STAGED: FormSpec = {
      parts: new Map([["name", { file: false, repeated: false }], ["zkey", { file: true, repeated: false, staged: true }]]),
      maxParts: 5,
      maxFieldBytes: 32
    }
    /** A stage that reads the part only once `go` resolves, recording how much it was given. */
    const slowStage = (go: Promise<void>) => {
      const seen = { bytes: 0, parts: 0 }
      const stage: StagePart = async (part: Readable) => {
        seen.parts++
        await go
        const hash = createHash("sha256")
        for await (const chunk of part) {
          hash.update(chunk as Buffer)
          seen.bytes += (chunk as Buffer).length
        }
        return Exit.succeed({ staging: "staging:test", digest: hash.digest("hex") as Digest, size: seen.bytes, chunks: 1 })
      }
      return { seen, stage }
    }
    const big = "z".repeat(4 * 1024 * 1024)
    const body = encoder.encode(multipart([{ name: "name", value: "k" }, { name: "zkey", filename: "k.zkey", value: big }]).body)
    const contentType = FORM.headers["content-type"]

    it("goes to the stage as it streams, and the form holds what the stage stored instead of bytes", async () => {
      let release!: () => void
      const { seen, stage } = slowStage(new Promise((resolve) => (release = resolve)))
      const parser = makeFormParser(contentType, STAGED, stage)
      // Fed in 64 KiB chunks as a socket would: the parser asks the transport to wait while the stage reads nothing.
      let waited = 0
      let at = 0
      for (; at < body.length; at += 65_536) {
        const taken = parser.write(body.subarray(at, at + 65_536))
        if (taken !== undefined) {
          waited++
          break
        }
      }
      expect(waited).toBe(1)
      // The transport stopped well before the 4 MiB part was read whole.
      expect(at).toBeLessThan(1024 * 1024)
      release()
      for (at += 65_536; at < body.length; at += 65_536) await parser.write(body.subarray(at, at + 65_536))
      const form = await Effect.runPromise(parser.end)
      expect(seen).toEqual({ bytes: big.length, parts: 1 })
      expect(form).toEqual({
        name: "k",
        zkey: {
          filename: "k.zkey",
          contentType: "text/plain",
          staged: { staging: "staging:test", digest: createHash("sha256").update(big).digest("hex"), size: big.length, chunks: 1 }
        }
      })
    })

    it("answers the storage's failure, and a body cut short as malformed, after the stage has stopped", async () => {
      const failing: StagePart = async (part) => {
        part.resume()
        return Exit.fail(new StorageError({ message: "disk full" }))
      }
      const parser = makeFormParser(contentType, STAGED, failing)
      await parser.write(body)
      expect(await Effect.runPromise(Effect.flip(parser.end))).toMatchObject({ _tag: "StorageError", message: "disk full" })

      let stopped = false
      const reading: StagePart = async (part) => {
        try {
          for await (const _ of part) void _
          return Exit.succeed({ staging: "s", digest: "d" as Digest, size: 0, chunks: 0 })
        } catch {
          return Exit.fail({ _tag: "PartCut" } as const)
        } finally {
          stopped = true
        }
      }
      const cut = makeFormParser(contentType, STAGED, reading)
      await cut.write(body.subarray(0, 2 * 1024 * 1024))
      const failed = await Effect.runPromise(Effect.flip(cut.end))
      expect(stopped).toBe(true)
      expect(failed).toMatchObject({ _tag: "InvalidRequest", details: [{ path: "body", message: "the body ends before the closing boundary" }] })
    })
  })
})
