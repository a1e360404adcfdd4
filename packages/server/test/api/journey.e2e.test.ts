import { Accounts, ApiKeys } from "@mzk/core"
import { makeHttpClient, startWebhookReceiver, verifyWebhookSignature } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

const http = (baseUrl: string, key: string) => {
  const client = makeHttpClient(baseUrl, { token: key })
  return (method: string, path: string, body?: unknown) => client.send(method, path, { body })
}

/** An independent verifier: the snarkjs command line, in another process, with the published key. */
const snarkjsCli = fileURLToPath(new URL("../../../proving/node_modules/.bin/snarkjs", import.meta.url))

describe("the whole journey over a real port", () => {
  it.scopedLive("account → key → webhook → proof → signed proof.completed → verify → signed proof.verified", () =>
    Effect.gen(function*() {
      const receiver = yield* startWebhookReceiver()
      const { baseUrl, context } = yield* startServer({ allowInsecureWebhooks: true, workers: true })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Journey" })).pipe(Effect.provide(context))
      // The first key comes from `mzk accounts create` in real use; here from the server's own core.
      const first = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "bootstrap" })).pipe(Effect.provide(context))
      const call = http(baseUrl, Redacted.value(first.secret))

      const key = yield* Effect.promise(() => call("POST", "/api/v1/keys", { name: "ci-pipeline", scopes: ["proofs:write", "proofs:read", "webhooks:write", "circuits:read"] }))
      expect(key.status).toBe(201)
      const ci = http(baseUrl, key.json.key)

      const webhook = yield* Effect.promise(() =>
        ci("POST", "/api/v1/webhooks", { url: receiver.url, events: ["proof.completed", "proof.verified"], description: "journey" }))
      expect(webhook.status).toBe(201)
      expect(webhook.json.secret).toMatch(/^whsec_/)

      const circuits = yield* Effect.promise(() => ci("GET", "/api/v1/circuits"))
      expect(circuits.json.circuits.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(["multiplier", "range", "hash_preimage", "merkle_membership"]))

      const proof = yield* Effect.promise(() => ci("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: "11" } }))
      expect(proof.status).toBe(202)
      expect(proof.json.status).toBe("queued")
      expect(proof.headers.get("ratelimit-policy")).toBe('"key";q=60;w=60, "daily";q=5000;w=86400')
      expect(proof.headers.get("ratelimit")).toMatch(/^"key";r=59;t=\d+$/)

      const [completed] = yield* receiver.waitFor(1).pipe(Effect.timeout("60 seconds"))
      const body = completed!.rawBody.toString("utf8")
      verifyWebhookSignature(body, completed!.headers["service-signature"] as string, webhook.json.secret)
      expect(() => verifyWebhookSignature(body + " ", completed!.headers["service-signature"] as string, webhook.json.secret)).toThrow()
      const event = JSON.parse(body)
      expect(event).toMatchObject({ type: "proof.completed", data: { proof_id: proof.json.proof_id, circuit: "multiplier", status: "completed", public_inputs: { c: "33" } } })
      expect(event.id).toMatch(/^evt_/)

      const fetched = yield* Effect.promise(() => ci("GET", `/api/v1/proofs/${proof.json.proof_id}`))
      expect(fetched.json).toMatchObject({ status: "completed", proof_blob: event.data.proof_blob, public_inputs: { c: "33" } })

      // Anyone can check the proof with snarkjs and the published verification key.
      const circuit = yield* Effect.promise(() => ci("GET", "/api/v1/circuits/multiplier"))
      const dir = mkdtempSync(join(tmpdir(), "mzk-verify-"))
      try {
        writeFileSync(join(dir, "vk.json"), JSON.stringify(circuit.json.verification_key))
        writeFileSync(join(dir, "proof.json"), Buffer.from(fetched.json.proof_blob, "base64").toString("utf8"))
        writeFileSync(join(dir, "public.json"), JSON.stringify(["33"]))
        const out = execFileSync(snarkjsCli, ["groth16", "verify", "vk.json", "public.json", "proof.json"], { cwd: dir, encoding: "utf8" })
        expect(out).toContain("OK")
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }

      const verified = yield* Effect.promise(() => ci("GET", `/api/v1/proofs/${proof.json.proof_id}/verify`))
      expect(verified.status).toBe(200)
      expect(verified.json).toMatchObject({ proof_id: proof.json.proof_id, circuit: "multiplier", valid: true })
      const [, verifiedEvent] = yield* receiver.waitFor(2).pipe(Effect.timeout("30 seconds"))
      verifyWebhookSignature(verifiedEvent!.rawBody, verifiedEvent!.headers["service-signature"] as string, webhook.json.secret)
      expect(JSON.parse(verifiedEvent!.rawBody.toString("utf8"))).toMatchObject({ type: "proof.verified", data: { valid: true } })

      const log = yield* Effect.promise(() => call("GET", `/api/v1/webhooks/${webhook.json.id}/deliveries`))
      expect(log.status).toBe(200)
      expect(log.json.deliveries.map((d: { outcome: string; status_code: number }) => [d.outcome, d.status_code])).toEqual([["succeeded", 200], ["succeeded", 200]])
    }), 120_000)
})
