import { SCOPES } from "@mzk/core"
import { eventually } from "@mzk/testkit"
import { expect } from "vitest"
import type { makeHarness, Reply } from "./support.js"

export type Harness = Awaited<ReturnType<typeof makeHarness>>
export type ScopeName = (typeof SCOPES)[number]

export const HOOK_URL = "https://hooks.example.com/mzk"

/** A new key of the same account holding exactly `scopes` (made with an all-scope `token`). */
export const keyWithScopes = async (h: Harness, token: string, scopes: ReadonlyArray<ScopeName>, name = "scoped") => {
  const reply = await h.call("POST", "/api/v1/keys", { token, body: { name, scopes } })
  if (reply.status !== 201) throw new Error(`could not create a scoped key: ${reply.status} ${reply.text}`)
  return reply.json.key as string
}

/** Every scope but `scope`: a key that may do everything except what needs `scope`. */
export const allBut = (scope: ScopeName): Array<ScopeName> => SCOPES.filter((s) => s !== scope)

export const createWebhook = async (h: Harness, token: string, body: Record<string, unknown> = {}) => {
  const reply = await h.call("POST", "/api/v1/webhooks", {
    token,
    body: { url: HOOK_URL, events: ["proof.completed"], ...body }
  })
  if (reply.status !== 201) throw new Error(`could not create a webhook: ${reply.status} ${reply.text}`)
  return reply.json as { id: string; secret: string; [k: string]: unknown }
}

export const MULTIPLIER = { type: "multiplier", inputs: { a: 3, b: 11 } }

export const createProof = async (h: Harness, token: string, body: unknown = MULTIPLIER) => {
  const reply = await h.call("POST", "/api/v1/proofs", { token, body })
  if (reply.status !== 202) throw new Error(`could not create a proof: ${reply.status} ${reply.text}`)
  return reply.json as { proof_id: string; status: string; [k: string]: unknown }
}

/** Every response carries a `Request-Id`. */
export const expectRequestId = (reply: Reply) => expect(reply.headers.get("request-id")).toMatch(/^req_[0-9a-z]{26}$/)

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** The paths of an invalid_request's details. */
export const detailPaths = (reply: Reply): Array<string> =>
  ((reply.json?.error?.details ?? []) as Array<{ path: string }>).map((d) => d.path)

export interface FormPart {
  readonly name: string
  readonly value: string
  readonly filename?: string
  readonly contentType?: string
}

/** A `multipart/form-data` body written by hand (so tests can also send what no library would), and its Content-Type. */
export const multipart = (parts: ReadonlyArray<FormPart>, boundary = "mzk-test-boundary-7MA4YWxk") => ({
  headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  body: parts.map((part) =>
    `--${boundary}\r\n` +
    `Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}\r\n` +
    (part.contentType === undefined ? "" : `Content-Type: ${part.contentType}\r\n`) +
    `\r\n${part.value}\r\n`
  ).join("") + `--${boundary}--\r\n`
})

/**
 * A circuit the testkit's fake compiler builds (it reads the signal declarations and `main`):
 * inputs x[2] (private) and y (public), output z; public signals z, y.
 */
export const SUM_MAIN = `pragma circom 2.1.6;
include "lib/mul.circom";
template Sum() {
  signal input x[2];
  signal input y;
  signal output z;
  z <== Mul()(x[0], x[1]) + y;
}
component main {public [y]} = Sum();
`
export const MUL_LIB = `pragma circom 2.1.6;
template Mul() { signal input a; signal input b; signal output c; c <== a * b; }
`

/** The parts of a circom upload of SUM_MAIN; `main` replaces the main file's source (fake directives, a slow build). */
export const circomParts = (name: string, main = SUM_MAIN): Array<FormPart> => [
  { name: "name", value: name },
  { name: "description", value: "x[0] * x[1] + y" },
  { name: "main", filename: "sum.circom", value: main },
  { name: "sources", filename: "lib/mul.circom", value: MUL_LIB }
]

/** The parts of a prebuilt upload: the fake compiler reads the signals from `sym`. */
export const prebuiltParts = (name: string): Array<FormPart> => [
  { name: "name", value: name },
  { name: "wasm", filename: "sum.wasm", contentType: "application/wasm", value: "\0asm-fake" },
  { name: "zkey", filename: "sum.zkey", contentType: "application/octet-stream", value: "zkey-fake" },
  { name: "sym", filename: "sum.sym", value: "signal input a;\nsignal output c;\ncomponent main = T();\n" }
]

export const uploadCircuit = async (h: Harness, token: string, parts: ReadonlyArray<FormPart>) => {
  const reply = await h.call("POST", "/api/v1/circuits", { token, ...multipart(parts) })
  if (reply.status !== 202) throw new Error(`could not upload a circuit: ${reply.status} ${reply.text}`)
  return reply.json as { name: string; status: string; [k: string]: unknown }
}

/** Polls the circuit until it has left `compiling` (the build loop runs the fake compiler, ~100 ms a build). */
export const settled = (h: Harness, token: string, name: string) =>
  eventually(async () => {
    const reply = await h.call("GET", `/api/v1/circuits/${name}`, { token })
    return reply.json?.status === "compiling" ? undefined : reply
  })
