import { Accounts, ApiKeys } from "@mzk/core"
import { eventually, type HttpClient } from "@mzk/testkit"
import { expect } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { DatabaseTarget } from "../../src/database.js"
import { startServer } from "../realServer.js"

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
const dir = fileURLToPath(new URL("../fixtures/circuits/bounded_squares/", import.meta.url))
export const BOUNDED_SQUARES = {
  main: readFileSync(`${dir}main.circom`, "utf8"),
  sources: { "lib/square.circom": readFileSync(`${dir}lib/square.circom`, "utf8") }
} as const

/** A circuit whose proofs take as long as asked: its witness runs a loop of `n` rounds (about 25 ns each). */
export const SPIN = {
  main: readFileSync(fileURLToPath(new URL("../fixtures/circuits/spin/main.circom", import.meta.url)), "utf8")
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

/** An independent verifier and setup: the snarkjs command line, in another process. */
export const snarkjsCli = fileURLToPath(new URL("../../../proving/node_modules/.bin/snarkjs", import.meta.url))

/**
 * A server on a real port that builds uploads with a small development ptau (made at start in
 * `ptauDir`, as `dev_pot<DEV_PTAU_POWER>.ptau`), and an account's key on it.
 */
export const serverWithAccount = (options: {
  readonly workers: boolean
  readonly maxUploadBytes?: number
  readonly proofTimeoutMs?: number
  /** Default: SQLite in memory. */
  readonly database?: DatabaseTarget
}) =>
  Effect.gen(function*() {
    const ptauDir = yield* tempDir("ptau")
    const server = yield* startServer({
      ...(options.database === undefined ? {} : { database: options.database }),
      allowInsecureWebhooks: true,
      workers: options.workers,
      circuits: {
        developmentPtau: { power: DEV_PTAU_POWER, dir: ptauDir },
        // The host's default artifact cache, shared as servers on one host share it: its files are
        // named by digest (whatever a server finds there is the bytes it asked for), and the
        // built-in circuits' prover tables are built once per run rather than at every start.
        ...(options.maxUploadBytes === undefined ? {} : { maxUploadBytes: options.maxUploadBytes })
      },
      ...(options.proofTimeoutMs === undefined ? {} : { proofs: { timeoutMs: options.proofTimeoutMs } })
    })
    const keyOf = (name: string) =>
      Effect.gen(function*() {
        const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name }))
        const key = yield* Effect.flatMap(ApiKeys, (k) => k.create(account.id, { name: "tests" }))
        return { account: account.id, token: Redacted.value(key.secret) }
      }).pipe(Effect.provide(server.context))
    return { ...server, keyOf, ptauDir }
  })

/** What circom writes for a prebuilt upload: the witness generator, the signal names and the constraints, and their files. */
export interface CompiledCircuit {
  readonly wasm: Uint8Array
  readonly sym: Uint8Array
  readonly r1cs: Uint8Array
  readonly paths: { readonly wasm: string; readonly sym: string; readonly r1cs: string }
}

/**
 * A circuit compiled by the repository's circom 2 (WebAssembly, as the server builds), `--O2`, in a
 * folder of the test's scope; the source may include nothing but circomlib.
 */
export const compileCircom = (source: string) =>
  Effect.gen(function*() {
    const dir = yield* tempDir("circom")
    const name = basename(source, ".circom")
    copyFileSync(source, join(dir, `${name}.circom`))
    const circom2 = fileURLToPath(new URL("../../../proving/node_modules/circom2/cli.js", import.meta.url))
    execFileSync(process.execPath, [circom2, `${name}.circom`, "--r1cs", "--wasm", "--sym", "--O2", "-o", "."], { cwd: dir, stdio: "pipe" })
    const paths = { wasm: join(dir, `${name}_js`, `${name}.wasm`), sym: join(dir, `${name}.sym`), r1cs: join(dir, `${name}.r1cs`) }
    const read = (path: string) => new Uint8Array(readFileSync(path))
    return { wasm: read(paths.wasm), sym: read(paths.sym), r1cs: read(paths.r1cs), paths } satisfies CompiledCircuit
  })

/** The parts of a prebuilt upload; `r1cs` and `sample_inputs` are optional. */
export interface PrebuiltParts {
  readonly wasm: Uint8Array
  readonly zkey: Uint8Array
  readonly sym: Uint8Array
  readonly r1cs?: Uint8Array | undefined
  readonly sample_inputs?: string | undefined
}

/** `POST /api/v1/circuits` with prebuilt artifacts, as curl's `-F wasm=@c.wasm …` sends them. */
export const uploadPrebuilt = async (baseUrl: string, token: string, name: string, parts: PrebuiltParts) => {
  const form = new FormData()
  form.append("name", name)
  form.append("wasm", new Blob([parts.wasm], { type: "application/wasm" }), "circuit.wasm")
  form.append("zkey", new Blob([parts.zkey], { type: "application/octet-stream" }), "circuit.zkey")
  form.append("sym", new Blob([parts.sym], { type: "text/plain" }), "circuit.sym")
  if (parts.r1cs !== undefined) form.append("r1cs", new Blob([parts.r1cs], { type: "application/octet-stream" }), "circuit.r1cs")
  if (parts.sample_inputs !== undefined) form.append("sample_inputs", new Blob([parts.sample_inputs], { type: "application/json" }), "input.json")
  const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${token}` } })
  return { status: response.status, json: await response.json() as Record<string, any> }
}

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

/** Polls `GET path` every `everyMs` until `done` holds for its body (a build or a proof settling). */
export const settle = async (client: HttpClient, path: string, done: (body: any) => boolean, withinMs = 60_000, everyMs = 100) => {
  let last: unknown
  await eventually(async () => {
    const reply = await client.send("GET", path)
    last = reply.json
    return done(reply.json) ? true : undefined
  }, withinMs, everyMs).catch((error: unknown) => {
    throw new Error(`${path} did not settle: ${JSON.stringify(last)} (${String(error)})`)
  })
  return last as any
}
