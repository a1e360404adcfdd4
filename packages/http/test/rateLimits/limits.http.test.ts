import { DEFAULT_LIMITS, Limits } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, harnessOver, type makeHarness } from "../support.js"

// An embedder's own numbers, provided with the core as the Limits docs say.
const OWN_LIMITS = { ...DEFAULT_LIMITS, maxActiveKeys: 2, proofRequestsPerMinutePerKey: 3 }

describe("limits an embedder provides with the core apply to HTTP requests", () => {
  let h: Awaited<ReturnType<typeof makeHarness>>
  beforeAll(async () => {
    h = await harnessOver(ManagedRuntime.make(Layer.merge(testCore(), Layer.succeed(Limits, OWN_LIMITS))))
  })
  afterAll(() => h.close())

  it("an account holds 2 active keys, and a key makes 3 proof requests a minute", async () => {
    const { key } = await h.newAccount()
    expect((await h.call("POST", "/api/v1/keys", { token: key, body: { name: "second" } })).status).toBe(201)
    const third = await h.call("POST", "/api/v1/keys", { token: key, body: { name: "third" } })
    expectEnvelope(third, 409, "key_limit_reached")
    expect(third.json.error.message).toContain("2 active keys")
    const proof = { type: "multiplier", inputs: { a: "3", b: "11" } }
    for (let i = 0; i < 3; i++) expect((await h.call("POST", "/api/v1/proofs", { token: key, body: proof })).status).toBe(202)
    const limited = await h.call("POST", "/api/v1/proofs", { token: key, body: proof })
    expectEnvelope(limited, 429, "rate_limit_exceeded")
    expect(limited.headers.get("ratelimit-policy")).toContain(`"key";q=3;w=60`)
  })
})
