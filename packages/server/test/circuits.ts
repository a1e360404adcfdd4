import { eventually, type HttpClient } from "@mzk/testkit"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** A fresh folder for the test's scope (a ptau, a cache), removed when the scope closes. */
export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), `mzk-${prefix}-`))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/**
 * A circuit written for these tests (not one of the four built in): two files, an include of
 * circomlib and one of its own `lib/`, a private array, a public input and an output.
 */
const dir = fileURLToPath(new URL("./fixtures/circuits/bounded_squares/", import.meta.url))
export const BOUNDED_SQUARES = {
  main: readFileSync(`${dir}main.circom`, "utf8"),
  sources: { "lib/square.circom": readFileSync(`${dir}lib/square.circom`, "utf8") }
} as const

/** A circuit whose proofs take as long as asked: its witness runs a loop of `n` rounds (about 25 ns each). */
export const SPIN = {
  main: readFileSync(fileURLToPath(new URL("./fixtures/circuits/spin/main.circom", import.meta.url)), "utf8")
} as const

/**
 * Requests a SPIN proof of about seven hours (10^12 rounds: only a cancel or the timeout ends it)
 * and waits until a worker has been proving it for a second; its record as created.
 */
export const spinningProof = (client: HttpClient) =>
  Effect.gen(function*() {
    const created = yield* Effect.promise(() => client.send("POST", "/api/v1/proofs", { body: { type: "spin", inputs: { n: "1000000000000", a: 3 } } }))
    expect(created.status).toBe(202)
    const path = `/api/v1/proofs/${created.json.proof_id}`
    yield* Effect.promise(() => settle(client, path, (p) => p.status !== "queued", 60_000))
    // Proving for a while: the prover thread is deep in the witness loop.
    yield* Effect.sleep("1 second")
    expect((yield* Effect.promise(() => client.send("GET", path))).json.status).toBe("running")
    return created.json as { proof_id: string; created_at: string }
  })

/** The powers of tau the tests build with: development only, small enough to make in a second. */
export const DEV_PTAU_POWER = 8

/** `POST /api/v1/circuits` as a browser or curl sends it: multipart/form-data. */
export const uploadCircuit = async (
  baseUrl: string,
  token: string,
  name: string,
  files: { readonly main: string; readonly sources?: Readonly<Record<string, string>> } = BOUNDED_SQUARES
) => {
  const form = new FormData()
  form.append("name", name)
  form.append("main", new Blob([files.main]), "main.circom")
  for (const [path, text] of Object.entries(files.sources ?? {})) form.append("sources", new Blob([text]), path)
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

/** Polls `GET path` until `done` holds for its body (a build or a proof settling). */
export const settle = async (client: HttpClient, path: string, done: (body: any) => boolean, withinMs = 60_000) => {
  let last: unknown
  await eventually(async () => {
    const reply = await client.send("GET", path)
    last = reply.json
    return done(reply.json) ? true : undefined
  }, withinMs, 100).catch((error: unknown) => {
    throw new Error(`${path} did not settle: ${JSON.stringify(last)} (${String(error)})`)
  })
  return last as any
}
