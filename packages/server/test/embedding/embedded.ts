import { type HttpClient, type HttpReply, makeHttpClient } from "@mzk/testkit"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { expect } from "vitest"
import { settle } from "../circuits/circuits.js"

/**
 * What the framework tests (Express, Fastify, Hono) share: an app listening on a loopback port,
 * and the calls every mount must carry through (a proof made, completed and verified; an upload).
 */

/** `listener` on a free loopback port; `close` ends its connections too, so nothing lingers. */
export const listen = async (listener: (request: IncomingMessage, response: ServerResponse) => void) => {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** A client that can also upload a circuit. */
export interface UploadingClient extends HttpClient {
  /** `POST /api/v1/circuits` with `form` as `multipart/form-data`, as a browser or curl sends it. */
  readonly upload: (form: FormData) => Promise<{ readonly status: number; readonly json: Record<string, any> }>
}

/** `client` with `upload`: the form encoded as fetch encodes it, sent through the client like any other body. */
export const withUploads = (client: HttpClient): UploadingClient => ({
  ...client,
  upload: async (form) => {
    const encoded = new Response(form)
    const { json, status } = await client.send("POST", "/api/v1/circuits", {
      body: new Uint8Array(await encoded.arrayBuffer()),
      headers: { "content-type": encoded.headers.get("content-type")! }
    })
    return { status, json }
  }
})

/**
 * The testkit's client over a fetch handler: each call a `Request` for `base` + path with the
 * bearer token, handed to `handler`, the answer read as an `HttpReply`. Over an embedded mzk's
 * `fetch`, a test reaches it as an application's route handler does, with no port.
 */
export const fetchClient = (handler: (request: Request) => Promise<Response>, base: string, token: string): HttpClient => ({
  send: async (method, path, options = {}) => {
    const headers = new Headers(options.headers)
    headers.set("authorization", `Bearer ${options.token ?? token}`)
    const sent = options.body
    const body = sent === undefined ? undefined : typeof sent === "string" || sent instanceof Uint8Array ? sent : JSON.stringify(sent)
    if (body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json")
    const response = await handler(new Request(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) }))
    const text = await response.text()
    let json: unknown
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json } satisfies HttpReply
  },
  close: () => undefined
})

/**
 * Through the mount at `baseUrl`: a key listing (GET), then a proof created (POST, a JSON body),
 * proved by the in-process worker, fetched and verified. Returns the proof's id.
 */
export const proveThrough = async (baseUrl: string, token: string, factors: { readonly a: number; readonly b: number } = { a: 3, b: 11 }) => {
  const api: HttpClient = makeHttpClient(baseUrl, { token })
  const keys = await api.send("GET", "/api/v1/keys")
  expect(keys.status, keys.text).toBe(200)
  expect(keys.json.keys.length).toBeGreaterThan(0)

  const created = await api.send("POST", "/api/v1/proofs", { body: { type: "multiplier", inputs: { a: factors.a, b: String(factors.b) } } })
  expect(created.status, created.text).toBe(202)
  expect(created.json).toMatchObject({ status: "queued", type: "multiplier" })
  const proof = await settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 60_000)
  expect(proof).toMatchObject({ status: "completed", public_inputs: { c: String(factors.a * factors.b) } })

  const verified = await api.send("GET", `/api/v1/proofs/${created.json.proof_id}/verify`)
  expect(verified.status, verified.text).toBe(200)
  expect(verified.json).toMatchObject({ proof_id: created.json.proof_id, circuit: "multiplier", valid: true })
  return created.json.proof_id as string
}

/**
 * A circuit upload (multipart) through the mount at `baseUrl`: accepted, and taken up by the
 * in-process build loop. Prebuilt artifacts that are not artifacts, so the build fails at once
 * (`invalid_artifacts`) rather than compiling for seconds; that it leaves `compiling` is what shows
 * the loop ran. (Circom sources would be refused here: these mounts have no powers of tau.)
 */
export const uploadThrough = async (baseUrl: string, token: string, name: string) => {
  const form = new FormData()
  form.append("name", name)
  form.append("wasm", new Blob([new Uint8Array([0, 0x61, 0x73, 0x6d])], { type: "application/wasm" }), "c.wasm")
  form.append("zkey", new Blob(["not a zkey"]), "c.zkey")
  form.append("sym", new Blob(["1,1,0,main.a\n"]), "c.sym")
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  const uploaded = await response.json() as Record<string, unknown>
  expect(response.status, JSON.stringify(uploaded)).toBe(202)
  expect(uploaded).toMatchObject({ name, status: "compiling" })
  const built = await settle(makeHttpClient(baseUrl, { token }), `/api/v1/circuits/${name}`, (c) => c.status !== "compiling", 30_000)
  expect(built).toMatchObject({ name, status: "failed", error: { code: "invalid_artifacts" } })
}
