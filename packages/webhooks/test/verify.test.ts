import { computeSignature, signatureHeader } from "@mzk/core"
import {
  constructEvent,
  DEFAULT_TOLERANCE_SECONDS,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  verifySignature,
  WebhookVerificationError,
  type WebhookVerificationErrorCode
} from "@mzk/webhooks"
import fc from "fast-check"
import { createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"

const secret = "whsec_dGVzdC1zZWNyZXQtZm9yLXRoZS1yZWNlaXZlci1oZWxwZXI="
const NOW = Date.UTC(2026, 10, 22, 10, 0)
const t = Math.floor(NOW / 1000)
const event = { id: "evt_01jd0000000000000000000000", type: "proof.verified", created_at: "2026-11-22T10:00:00.000Z", data: { proof_id: "proof_01jd0000000000000000000000", circuit: "multiplier", valid: true, verified_at: "2026-11-22T10:00:00.000Z" } }
const body = JSON.stringify(event)
// The core signs (the server's code, @noble/hashes); the receiver checks with node:crypto.
const header = signatureHeader(secret, t, body)

const codeOf = (f: () => unknown): WebhookVerificationErrorCode | "accepted" => {
  try {
    f()
    return "accepted"
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    expect((error as Error).message).not.toContain(secret)
    return (error as WebhookVerificationError).code
  }
}

describe("verifySignature", () => {
  it("accepts a delivery signed by the server, as a string or the bytes received", () => {
    expect(verifySignature(body, header, secret, { now: NOW })).toEqual({ timestamp: t })
    expect(verifySignature(Buffer.from(body), header, secret, { now: new Date(NOW) })).toEqual({ timestamp: t })
    expect(verifySignature(new TextEncoder().encode(body), header, secret, { now: NOW })).toEqual({ timestamp: t })
    // A Uint8Array that views part of a larger buffer: only its own bytes are signed.
    const padded = Buffer.from(`xx${body}yy`)
    expect(verifySignature(padded.subarray(2, padded.length - 2), header, secret, { now: NOW })).toEqual({ timestamp: t })
    expect(SIGNATURE_HEADER).toBe("Service-Signature")
    expect(DEFAULT_TOLERANCE_SECONDS).toBe(300)
  })

  it("accepts any matching v1, so a delivery passes while its secret is rotated, and skips other schemes", () => {
    const good = computeSignature(secret, t, body)
    const other = computeSignature("whsec_old", t, body)
    expect(codeOf(() => verifySignature(body, `t=${t},v1=${other},v1=${good}`, secret, { now: NOW }))).toBe("accepted")
    expect(codeOf(() => verifySignature(body, `t=${t},v1=${other},v1=${good}`, "whsec_old", { now: NOW }))).toBe("accepted")
    expect(codeOf(() => verifySignature(body, ` t=${t} , v0=abc, v2=${good}, v1=${good.toUpperCase()}`, secret, { now: NOW }))).toBe("accepted")
    expect(codeOf(() => verifySignature(body, `t=${t},v1=nothex,v1=${good}`, secret, { now: NOW }))).toBe("accepted")
  })

  it("refuses with a code naming the cause", () => {
    const v1 = computeSignature(secret, t, body)
    const cases: Array<[WebhookVerificationErrorCode, () => unknown]> = [
      ["missing_header", () => verifySignature(body, undefined, secret, { now: NOW })],
      ["missing_header", () => verifySignature(body, null, secret, { now: NOW })],
      ["missing_header", () => verifySignature(body, "  ", secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `v1=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `t=${t}`, secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `t=${t},v0=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `t=soon,v1=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `t=-${t},v1=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `t=${t},t=${t},v1=${v1}`, secret, { now: NOW })],
      ["malformed_header", () => verifySignature(body, `t=${t};v1=${v1}`, secret, { now: NOW })],
      ["signature_mismatch", () => verifySignature(body.replace("true", "false"), header, secret, { now: NOW })],
      ["signature_mismatch", () => verifySignature(`${body} `, header, secret, { now: NOW })],
      ["signature_mismatch", () => verifySignature(JSON.stringify(JSON.parse(body), null, 2), header, secret, { now: NOW })],
      ["signature_mismatch", () => verifySignature(body, header, `${secret}x`, { now: NOW })],
      ["signature_mismatch", () => verifySignature(body, header, secret.slice("whsec_".length), { now: NOW })],
      ["signature_mismatch", () => verifySignature(body, `t=${t + 1},v1=${v1}`, secret, { now: NOW })],
      ["signature_mismatch", () => verifySignature(body, `t=${t},v1=${v1.slice(0, 62)}`, secret, { now: NOW })],
      ["timestamp_out_of_tolerance", () => verifySignature(body, header, secret, { now: NOW + 301_000 })],
      ["timestamp_out_of_tolerance", () => verifySignature(body, header, secret, { now: NOW - 301_000 })],
      ["timestamp_out_of_tolerance", () => verifySignature(body, header, secret, { now: NOW + 11_000, toleranceSeconds: 10 })],
      ["timestamp_out_of_tolerance", () => verifySignature(body, header, secret)]
    ]
    for (const [code, f] of cases) expect([code, codeOf(f)]).toEqual([code, code])
  })

  it("the tolerance is inclusive, either way, and can be widened or turned off", () => {
    expect(codeOf(() => verifySignature(body, header, secret, { now: NOW + 300_999 }))).toBe("accepted")
    expect(codeOf(() => verifySignature(body, header, secret, { now: NOW - 300_000 }))).toBe("accepted")
    expect(codeOf(() => verifySignature(body, header, secret, { now: NOW + 3_600_000, toleranceSeconds: 3600 }))).toBe("accepted")
    expect(codeOf(() => verifySignature(body, header, secret, { now: 0, toleranceSeconds: Infinity }))).toBe("accepted")
  })

  it("a stale request with a good signature says so, and carries its timestamp", () => {
    try {
      verifySignature(body, header, secret, { now: NOW + 3_600_000 })
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ name: "WebhookVerificationError", code: "timestamp_out_of_tolerance", timestamp: t })
      expect((error as Error).message).toContain("3600 s old")
    }
  })

  it("misuse is a TypeError, not a refused delivery: a parsed body, an empty secret, a bad tolerance", () => {
    expect(() => verifySignature(JSON.parse(body), header, secret, { now: NOW })).toThrow(/express\.raw/)
    expect(() => verifySignature(body, header, "", { now: NOW })).toThrow(TypeError)
    expect(() => verifySignature(body, header, undefined as unknown as string, { now: NOW })).toThrow(TypeError)
    expect(() => verifySignature(body, header, secret, { now: NOW, toleranceSeconds: -1 })).toThrow(RangeError)
    expect(() => verifySignature(body, header, secret, { now: NOW, toleranceSeconds: Number.NaN })).toThrow(RangeError)
  })
})

describe("constructEvent", () => {
  it("returns the verified event, typed by its type", () => {
    const received = constructEvent(body, header, secret, { now: NOW })
    expect(received).toEqual(event)
    if (received.type === "proof.verified") expect(received.data.valid).toBe(true)
    else expect.unreachable()
    expect(constructEvent(Buffer.from(body), header, secret, { now: NOW })).toEqual(event)
  })

  it("parses nothing that is not verified", () => {
    expect(codeOf(() => constructEvent("{not json", signatureHeader(secret, t, "{}"), secret, { now: NOW }))).toBe("signature_mismatch")
  })

  it("refuses a verified body that is not an mzk event: invalid_payload", () => {
    const signed = (raw: string | Uint8Array) => () =>
      constructEvent(raw, `t=${t},v1=${createHmac("sha256", secret).update(`${t}.`).update(raw).digest("hex")}`, secret, { now: NOW })
    const withField = (changes: object) => JSON.stringify({ ...event, ...changes })
    expect(codeOf(signed("{not json"))).toBe("invalid_payload")
    expect(codeOf(signed("[1,2]"))).toBe("invalid_payload")
    expect(codeOf(signed("null"))).toBe("invalid_payload")
    expect(codeOf(signed(withField({ id: "wh_1" })))).toBe("invalid_payload")
    expect(codeOf(signed(withField({ type: "proof.exploded" })))).toBe("invalid_payload")
    expect(codeOf(signed(withField({ created_at: 1 })))).toBe("invalid_payload")
    expect(codeOf(signed(withField({ data: "x" })))).toBe("invalid_payload")
    // Signed bytes that are not UTF-8.
    expect(codeOf(signed(new Uint8Array([0x7b, 0xff, 0x7d])))).toBe("invalid_payload")
  })
})

describe("header parsing, properties", () => {
  const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/)
  const seconds = fc.integer({ min: 0, max: 999_999_999_999 })

  it("reads t and every v1 of any well-formed header, in order, around spaces and other schemes", () => {
    fc.assert(fc.property(seconds, fc.array(hex64, { minLength: 1, maxLength: 4 }), fc.array(fc.tuple(fc.constantFrom("v0", "v2", "x"), hex64), { maxLength: 3 }), fc.boolean(), (ts, v1s, others, spaced) => {
      const sep = spaced ? " , " : ","
      const parts = [`t=${ts}`, ...others.map(([k, v]) => `${k}=${v}`), ...v1s.map((v) => `v1=${v}`)]
      expect(parseSignatureHeader(parts.join(sep))).toEqual({ timestamp: ts, signatures: v1s })
    }))
  })

  it("any string either parses or throws WebhookVerificationError with a header code, never anything else", () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom("t", "v", "1", "=", ",", " ", "0", "9", "a", "f") })), (header) => {
      try {
        const parsed = parseSignatureHeader(header)
        expect(Number.isSafeInteger(parsed.timestamp)).toBe(true)
        expect(parsed.signatures.length).toBeGreaterThan(0)
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError)
        expect(["missing_header", "malformed_header"]).toContain((error as WebhookVerificationError).code)
      }
    }))
  })

  it("a signature over any body and secret verifies; any change of body, secret, t or v1 does not", () => {
    fc.assert(fc.property(fc.string(), fc.string({ minLength: 1 }), fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }), fc.nat(63), (raw, key, ts, flip) => {
      const good = signatureHeader(key, ts, raw)
      expect(verifySignature(raw, good, key, { now: ts * 1000 })).toEqual({ timestamp: ts })
      expect(codeOf(() => verifySignature(`${raw}!`, good, key, { now: ts * 1000 }))).toBe("signature_mismatch")
      expect(codeOf(() => verifySignature(raw, good, `${key}!`, { now: ts * 1000 }))).toBe("signature_mismatch")
      expect(codeOf(() => verifySignature(raw, good.replace(`t=${ts}`, `t=${ts + 1}`), key, { now: ts * 1000 }))).toBe("signature_mismatch")
      const v1 = good.slice(good.indexOf("v1=") + 3)
      const flipped = v1.slice(0, flip) + (v1[flip] === "0" ? "1" : "0") + v1.slice(flip + 1)
      expect(codeOf(() => verifySignature(raw, `t=${ts},v1=${flipped}`, key, { now: ts * 1000 }))).toBe("signature_mismatch")
    }))
  })

  it("accepts exactly the timestamps within the tolerance", () => {
    fc.assert(fc.property(fc.integer({ min: -10_000, max: 10_000 }), fc.integer({ min: 0, max: 5_000 }), (offset, tolerance) => {
      const code = codeOf(() => verifySignature(body, header, secret, { now: (t + offset) * 1000, toleranceSeconds: tolerance }))
      expect(code).toBe(Math.abs(offset) <= tolerance ? "accepted" : "timestamp_out_of_tolerance")
    }))
  })
})
