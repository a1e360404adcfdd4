import { createClient, MzkApiError, parseRateLimit } from "@mzk/client"
import { describe, expect, it } from "vitest"

interface Sent {
  readonly url: string
  readonly init: RequestInit
}

/** A client whose fetch records the request and answers `response`. */
const recording = (response: () => Response = () => Response.json({ circuits: [] })) => {
  const sent: Array<Sent> = []
  const client = createClient({
    baseUrl: "https://mzk.example.com/",
    apiKey: "mzk_secret",
    headers: { "x-proxy": "yes" },
    fetch: async (url, init) => {
      sent.push({ url, init })
      return response()
    }
  })
  return { client, sent }
}

const rejection = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(MzkApiError)
  return error as MzkApiError
}

describe("requests", () => {
  it("sends the key, the extra headers, JSON bodies, ids encoded in the path and the page in the query", async () => {
    const { client, sent } = recording(() => Response.json({}))
    await client.webhooks.update("wh_1/../x", { active: true })
    await client.proofs.list({ status: "failed", limit: 5 })
    expect(sent.map((s) => [s.init.method, s.url])).toEqual([
      ["PATCH", "https://mzk.example.com/api/v1/webhooks/wh_1%2F..%2Fx"],
      ["GET", "https://mzk.example.com/api/v1/proofs?limit=5&status=failed"]
    ])
    expect(sent[0]!.init.headers).toMatchObject({ authorization: "Bearer mzk_secret", "x-proxy": "yes", "content-type": "application/json" })
    expect(sent[0]!.init.body).toBe('{"active":true}')
    expect(sent[0]!.init.signal).toBeInstanceOf(AbortSignal)
  })

  it("sends several event types as the parameter repeated, and two path ids where a path has two", async () => {
    const { client, sent } = recording(() => Response.json({}))
    await client.events.list({ type: ["proof.completed", "proof.failed"], created_gte: "2026-01-01T00:00:00.000Z", limit: 5 })
    await client.events.list({ type: "key.created" })
    await client.webhooks.retryDelivery("wh_1", "del_2", { idempotencyKey: "k-1" })
    expect(sent.map((s) => [s.init.method, s.url])).toEqual([
      ["GET", "https://mzk.example.com/api/v1/events?limit=5&type=proof.completed&type=proof.failed&created_gte=2026-01-01T00%3A00%3A00.000Z"],
      ["GET", "https://mzk.example.com/api/v1/events?type=key.created"],
      ["POST", "https://mzk.example.com/api/v1/webhooks/wh_1/deliveries/del_2/retry"]
    ])
    expect(sent[2]!.init.headers).toMatchObject({ "idempotency-key": "k-1" })
    expect(sent[2]!.init.body).toBeUndefined()
    await expect(client.webhooks.recovery("wh_1", "")).rejects.toThrow(TypeError)
  })

  it("cancels a proof and a batch with a bodiless POST, the Idempotency-Key when given", async () => {
    const { client, sent } = recording(() => Response.json({}))
    await client.proofs.cancel("proof_1", { idempotencyKey: "cancel-1" })
    await client.proofs.cancelBatch("batch_1")
    expect(sent.map((s) => [s.init.method, s.url, s.init.body])).toEqual([
      ["POST", "https://mzk.example.com/api/v1/proofs/proof_1/cancel", undefined],
      ["POST", "https://mzk.example.com/api/v1/proofs/batch/batch_1/cancel", undefined]
    ])
    expect(sent[0]!.init.headers).toMatchObject({ "idempotency-key": "cancel-1" })
    expect(sent[1]!.init.headers).not.toHaveProperty("idempotency-key")
    await expect(client.proofs.cancelBatch("")).rejects.toThrow(TypeError)
  })

  it("refuses an empty id rather than address the collection", async () => {
    const { client, sent } = recording()
    await expect(client.webhooks.remove("")).rejects.toThrow(TypeError)
    expect(sent).toEqual([])
    expect(() => createClient({ baseUrl: "not a url", apiKey: "k" })).toThrow()
    expect(() => createClient({ baseUrl: "https://x", apiKey: "" })).toThrow(TypeError)
  })

  it("uploads an archive with main as a text field naming the path in it", async () => {
    const { client, sent } = recording(() => Response.json({ name: "a" }, { status: 202 }))
    await client.circuits.create({ name: "a", archive: new Uint8Array([0x1f, 0x8b, 8]), main: "circuits/main.circom" })
    await client.circuits.create({ name: "b", archive: new File([new Uint8Array([0x50, 0x4b])], "src.zip"), main: "main.circom" })
    const [bytes, file] = sent.map((s) => s.init.body as FormData)
    // A field, not a file part: the server reads it as the main file's path in the archive.
    expect(bytes!.get("main")).toBe("circuits/main.circom")
    const archive = bytes!.get("archive") as File
    expect([archive.name, archive.type, [...new Uint8Array(await archive.arrayBuffer())]]).toEqual(["sources.archive", "application/octet-stream", [0x1f, 0x8b, 8]])
    expect([(file!.get("archive") as File).name, file!.get("main")]).toEqual(["src.zip", "main.circom"])
  })

  it("uploads a circuit as multipart: names, text and bytes, Files keep their own name", async () => {
    const { client, sent } = recording(() => Response.json({ name: "c" }, { status: 202 }))
    await client.circuits.create({
      name: "c",
      description: "d",
      main: "pragma circom 2.1.6;",
      sources: [new File(["template A() {}"], "lib/a.circom"), { filename: "lib/b.circom", content: new Uint8Array([65, 66]) }]
    })
    await client.circuits.create({
      name: "p",
      wasm: new Uint8Array([0, 97, 115, 109]),
      zkey: new Blob([new Uint8Array([1])]),
      sym: { filename: "x.sym", content: "1,1,0,main.x" },
      sample_inputs: { filename: "input.json", content: "{\"a\": 3}", contentType: "application/json" }
    })
    const [sources, prebuilt] = sent.map((s) => s.init.body as FormData)
    expect(sources!.get("name")).toBe("c")
    expect(sources!.get("description")).toBe("d")
    const main = sources!.get("main") as File
    expect([main.name, main.type, await main.text()]).toEqual(["main.circom", "text/plain", "pragma circom 2.1.6;"])
    expect((sources!.getAll("sources") as Array<File>).map((f) => f.name)).toEqual(["lib/a.circom", "lib/b.circom"])
    expect(await (sources!.getAll("sources")[1] as File).text()).toBe("AB")
    // No content-type of its own: fetch writes the multipart one with its boundary.
    expect(sent[0]!.init.headers).not.toHaveProperty("content-type")
    const parts = ["wasm", "zkey", "sym"].map((part) => prebuilt!.get(part) as File)
    expect(parts.map((f) => [f.name, f.type])).toEqual([
      ["circuit.wasm", "application/octet-stream"],
      ["circuit.zkey", "application/octet-stream"],
      ["x.sym", "application/octet-stream"]
    ])
    // Every file part of the API's form, the ones added after the client was written included.
    const sample = prebuilt!.get("sample_inputs") as File
    expect([sample.name, sample.type, await sample.text()]).toEqual(["input.json", "application/json", "{\"a\": 3}"])
    await expect(client.circuits.create({ name: "n", main: "x", sources: [new Blob(["y"]) as File] })).rejects.toThrow(/needs its path/)
  })
})

describe("answers", () => {
  it("an error envelope becomes an MzkApiError with its fields", async () => {
    const { client } = recording(() =>
      Response.json(
        { error: { code: "invalid_request", message: "bad", request_id: "req_1", details: [{ path: "inputs.a", message: "required" }] } },
        { status: 400 }
      ))
    expect(await rejection(client.proofs.create({ type: "multiplier", inputs: {} }))).toMatchObject({
      name: "MzkApiError",
      status: 400,
      code: "invalid_request",
      message: "bad",
      requestId: "req_1",
      details: [{ path: "inputs.a", message: "required" }],
      rateLimit: undefined
    })
  })

  it("a 429 carries Retry-After and the rate limits", async () => {
    const { client } = recording(() =>
      new Response(JSON.stringify({ error: { code: "rate_limit_exceeded", message: "slow down" } }), {
        status: 429,
        headers: { "content-type": "application/json", "retry-after": "17", "ratelimit-policy": '"key";q=60;w=60', ratelimit: '"key";r=0;t=17', "request-id": "req_2" }
      }))
    expect(await rejection(client.proofs.verify("proof_1"))).toMatchObject({
      status: 429,
      code: "rate_limit_exceeded",
      requestId: "req_2",
      retryAfterSeconds: 17,
      rateLimit: { policy: "key", remaining: 0, resetSeconds: 17, policies: [{ name: "key", limit: 60, windowSeconds: 60 }] }
    })
  })

  it("an answer that is not mzk's (a proxy's page) is described by its status", async () => {
    const { client } = recording(() => new Response("<html>Bad gateway</html>", { status: 502, statusText: "Bad Gateway", headers: { "request-id": "req_3" } }))
    expect(await rejection(client.keys.list())).toMatchObject({ status: 502, code: "unexpected_response", message: "GET /keys answered 502 Bad Gateway", requestId: "req_3" })
    const { client: broken } = recording(() => new Response("{", { status: 200, headers: { "content-type": "application/json" } }))
    expect(await rejection(broken.keys.list())).toMatchObject({ status: 200, code: "invalid_response" })
  })

  it("204 is undefined, verifier.sol is text", async () => {
    expect(await recording(() => new Response(null, { status: 204 })).client.keys.revoke("key_1")).toBeUndefined()
    const sol = "// SPDX-License-Identifier: GPL-3.0\npragma solidity >=0.7.0;"
    expect(await recording(() => new Response(sol, { headers: { "content-type": "text/plain; charset=utf-8" } })).client.circuits.verifier("multiplier")).toBe(sol)
  })
})

describe("parseRateLimit", () => {
  it("reads the policies and the tightest one's state; none without the headers", () => {
    expect(parseRateLimit(new Headers({ "ratelimit-policy": '"key";q=60;w=60, "daily";q=5000;w=86400', ratelimit: '"daily";r=3;t=600' }))).toEqual({
      policies: [{ name: "key", limit: 60, windowSeconds: 60 }, { name: "daily", limit: 5000, windowSeconds: 86400 }],
      policy: "daily",
      remaining: 3,
      resetSeconds: 600
    })
    expect(parseRateLimit(new Headers())).toBeUndefined()
    expect(parseRateLimit(new Headers({ "ratelimit-policy": '"key";q=60;w=60' }))).toBeUndefined()
  })
})
