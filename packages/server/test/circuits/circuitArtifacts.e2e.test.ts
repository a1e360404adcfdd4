import { expect, it } from "@effect/vitest"
import { Accounts, ApiKeys, ArtifactsRepo, BN128_FIELD_MODULUS, CircuitsRepo, Ids, type Scope, type StoredCircuit, type Timestamp } from "@mzk/core"
import { BUILD_DIR } from "@mzk/proving"
import { makeHttpClient } from "@mzk/testkit"
import Database from "better-sqlite3"
import { Effect, Either, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { startServer } from "../realServer.js"
import { serverWithAccount, settle, snarkjsCli, tempDir, uploadCircuit } from "./circuits.js"

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A GET as a browser's fetch sends it, its body as bytes. */
const download = async (baseUrl: string, path: string, token: string | undefined, headers: Record<string, string> = {}, method = "GET") => {
  const response = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: { ...headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }
  })
  const bytes = new Uint8Array(await response.arrayBuffer())
  const text = new TextDecoder().decode(bytes)
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, bytes, json }
}

const keyWith = (scopes?: ReadonlyArray<Scope>) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).create({ name: "Downloads" })
    const key = yield* (yield* ApiKeys).create(account.id, { name: "k", ...(scopes === undefined ? {} : { scopes: [...scopes] }) })
    return Redacted.value(key.secret)
  })

describe("GET /circuits/{name}/artifacts/{kind} over a real port", () => {
  it.scopedLive("a built-in circuit's files: whole, by range, revalidated, per system; refusals in the error envelope", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer()
      const token = yield* Effect.provide(keyWith(), context)
      const get = (path: string, headers?: Record<string, string>) => Effect.promise(() => download(baseUrl, path, token, headers))

      const file = new Uint8Array(readFileSync(join(BUILD_DIR, "multiplier", "multiplier.wasm")))
      const etag = `"${sha256(file)}"`
      const whole = yield* get("/circuits/multiplier/artifacts/wasm")
      expect(whole.status).toBe(200)
      expect(whole.bytes).toEqual(file)
      expect(Object.fromEntries(["etag", "content-length", "content-type", "content-disposition", "accept-ranges", "cache-control"]
        .map((name) => [name, whole.headers.get(name)]))).toEqual({
        etag,
        "content-length": String(file.length),
        "content-type": "application/wasm",
        "content-disposition": 'attachment; filename="multiplier@1.wasm"',
        "accept-ranges": "bytes",
        "cache-control": "private, no-cache"
      })
      // `name@1` is the same file: built-in circuits have one version.
      expect((yield* get("/circuits/multiplier@1/artifacts/wasm")).headers.get("etag")).toBe(etag)

      // Held already: 304 without a body; another tag gets the file.
      const held = yield* get("/circuits/multiplier/artifacts/wasm", { "if-none-match": `"0000", ${etag}` })
      expect([held.status, held.bytes.length, held.headers.get("etag")]).toEqual([304, 0, etag])
      expect((yield* get("/circuits/multiplier/artifacts/wasm", { "if-none-match": '"0000"' })).status).toBe(200)

      // One range: 206 with its Content-Range; from an offset to the end; the last bytes.
      const part = yield* get("/circuits/multiplier/artifacts/wasm", { range: "bytes=100-1123" })
      expect(part.status).toBe(206)
      expect(part.headers.get("content-range")).toBe(`bytes 100-1123/${file.length}`)
      expect(part.headers.get("content-length")).toBe("1024")
      expect(part.bytes).toEqual(file.subarray(100, 1124))
      const rest = yield* get("/circuits/multiplier/artifacts/wasm", { range: "bytes=30000-", "if-range": etag })
      expect([rest.status, rest.headers.get("content-range")]).toEqual([206, `bytes 30000-${file.length - 1}/${file.length}`])
      expect(rest.bytes).toEqual(file.subarray(30000))
      const tail = yield* get("/circuits/multiplier/artifacts/wasm", { range: "bytes=-16" })
      expect(tail.bytes).toEqual(file.subarray(file.length - 16))
      // A range of another file (If-Range) or several ranges: the whole file.
      const changed = yield* get("/circuits/multiplier/artifacts/wasm", { range: "bytes=30000-", "if-range": '"0000"' })
      expect([changed.status, changed.bytes.length]).toEqual([200, file.length])
      expect((yield* get("/circuits/multiplier/artifacts/wasm", { range: "bytes=0-1,5-6" })).status).toBe(200)
      // Past the end: 416 in the envelope, with the size.
      const past = yield* get("/circuits/multiplier/artifacts/wasm", { range: `bytes=${file.length}-` })
      expect(past.status).toBe(416)
      expect(past.json.error).toMatchObject({ code: "range_not_satisfiable" })
      expect(past.headers.get("content-range")).toBe(`bytes */${file.length}`)

      // HEAD: the same head, no body, nothing read.
      const head = yield* Effect.promise(() => download(baseUrl, "/circuits/multiplier/artifacts/wasm", token, {}, "HEAD"))
      expect([head.status, head.headers.get("etag"), head.headers.get("content-length"), head.bytes.length]).toEqual([200, etag, String(file.length), 0])

      // Each system's key: the zkey and verification key of ?proving_system=, named after it.
      const plonkZkey = new Uint8Array(readFileSync(join(BUILD_DIR, "multiplier", "multiplier.plonk.zkey")))
      const plonk = yield* get("/circuits/multiplier/artifacts/zkey?proving_system=plonk")
      expect([plonk.status, plonk.headers.get("etag"), plonk.headers.get("content-disposition"), plonk.headers.get("content-type")])
        .toEqual([200, `"${sha256(plonkZkey)}"`, 'attachment; filename="multiplier@1.plonk.zkey"', "application/octet-stream"])
      expect(plonk.bytes).toEqual(plonkZkey)
      const groth16 = yield* get("/circuits/multiplier/artifacts/zkey")
      expect(groth16.bytes).toEqual(new Uint8Array(readFileSync(join(BUILD_DIR, "multiplier", "multiplier.zkey"))))
      const key = yield* get("/circuits/multiplier/artifacts/verification_key?proving_system=fflonk")
      expect(key.headers.get("content-type")).toBe("application/json")
      expect(key.headers.get("etag")).toBe(`"${sha256(key.bytes)}"`)
      expect(key.json).toEqual(JSON.parse(readFileSync(join(BUILD_DIR, "multiplier", "verification_key.fflonk.json"), "utf8")))
      const keyHeld = yield* get("/circuits/multiplier/artifacts/verification_key?proving_system=fflonk", { "if-none-match": key.headers.get("etag")! })
      expect(keyHeld.status).toBe(304)

      // What the circuit does not have, or no circuit at all: the API's codes, naming the field.
      const noR1cs = yield* get("/circuits/multiplier/artifacts/r1cs")
      expect(noR1cs.status).toBe(400)
      expect(noR1cs.json.error.details).toEqual([{ path: "kind", message: "circuit multiplier@1 has no r1cs; it has wasm, zkey, verification_key" }])
      const unknownKind = yield* get("/circuits/multiplier/artifacts/proof")
      expect([unknownKind.status, unknownKind.json.error.code, unknownKind.json.error.details[0].path]).toEqual([400, "invalid_request", "kind"])
      const noPlonk = yield* get("/circuits/range/artifacts/zkey?proving_system=plonk")
      expect([noPlonk.status, noPlonk.json.error.details[0].path]).toEqual([400, "proving_system"])
      for (const path of ["/circuits/nothing/artifacts/wasm", "/circuits/multiplier@2/artifacts/wasm"]) {
        const missing = yield* get(path)
        expect([missing.status, missing.json.error.code]).toEqual([404, "circuit_not_found"])
      }
    }), 60_000)

  it.scopedLive("needs a key with circuits:read", () =>
    Effect.gen(function*() {
      const { baseUrl, context } = yield* startServer()
      const narrow = yield* Effect.provide(keyWith(["proofs:write", "proofs:read"]), context)
      const refused = yield* Effect.promise(() => download(baseUrl, "/circuits/multiplier/artifacts/zkey", narrow))
      expect([refused.status, refused.json.error.code]).toEqual([403, "insufficient_scope"])
      const anonymous = yield* Effect.promise(() => download(baseUrl, "/circuits/multiplier/artifacts/zkey", undefined))
      expect([anonymous.status, anonymous.json.error.code]).toEqual([401, "invalid_api_key"])
      const reader = yield* Effect.provide(keyWith(["circuits:read"]), context)
      expect((yield* Effect.promise(() => download(baseUrl, "/circuits/multiplier/artifacts/zkey", reader))).status).toBe(200)
    }), 30_000)

  it.scopedLive("a stored artifact of several chunks resumed at an offset: the bytes from it, read from the database from the chunk that holds it on", () =>
    Effect.gen(function*() {
      const MiB = 1024 * 1024
      const filename = join(yield* tempDir("resume"), "mzk.db")
      const { baseUrl, context } = yield* startServer({ database: { kind: "sqlite", filename } })
      // Every byte depends on its position, so a range read from the wrong place cannot match.
      const zkey = Uint8Array.from({ length: 3 * MiB + 4321 }, (_, i) => (i * 31 + (i >> 20)) & 0xff)
      const { token, digest } = yield* Effect.gen(function*() {
        const account = yield* (yield* Accounts).create({ name: "Resumes" })
        const key = yield* (yield* ApiKeys).create(account.id, { name: "k" })
        const artifacts = yield* ArtifactsRepo
        const zkeyDigest = yield* artifacts.put(zkey)
        const small = yield* artifacts.put(new TextEncoder().encode(`wasm and sym of ${account.id}`))
        const now = new Date().toISOString() as Timestamp
        const circuit: StoredCircuit = {
          id: yield* (yield* Ids).make("circuit"),
          name: "large",
          version: 1,
          owner: account.id,
          proving_system: "groth16",
          proving_systems: ["groth16"],
          status: "ready",
          error: null,
          description: null,
          constraints: 1,
          inputs: [],
          public_signals: [],
          verification_key: JSON.parse(readFileSync(join(BUILD_DIR, "multiplier", "verification_key.json"), "utf8")),
          development_only: true,
          field_modulus: BN128_FIELD_MODULUS,
          artifacts: { wasm: small, zkey: zkeyDigest, sym: small, r1cs: null },
          created_at: now,
          updated_at: now,
          source: { kind: "artifacts", wasm: small, zkey: zkeyDigest, sym: small, r1cs: null },
          lease_expires_at: null,
          attempts: 1,
          metadata: {}
        }
        expect(yield* (yield* CircuitsRepo).insert(circuit, { maxCircuits: 10, maxCompiling: 10 })).toEqual(Either.right({ version: 1, replaced: null }))
        return { token: Redacted.value(key.secret), digest: zkeyDigest }
      }).pipe(Effect.provide(context))
      const get = (headers?: Record<string, string>) => Effect.promise(() => download(baseUrl, "/circuits/large/artifacts/zkey", token, headers))

      const start = 2 * MiB + 100
      const resumed = yield* get({ range: `bytes=${start}-` })
      expect([resumed.status, resumed.headers.get("content-range")]).toEqual([206, `bytes ${start}-${zkey.length - 1}/${zkey.length}`])
      expect([resumed.bytes.length, sha256(resumed.bytes)]).toEqual([zkey.length - start, sha256(zkey.subarray(start))])

      // The database loses the first two chunks (bytes 0 to 2 MiB - 1): a range that starts after
      // them is still served whole and exact, which it could not be if they were read and dropped.
      const db = new Database(filename, { fileMustExist: true })
      yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
      expect(db.prepare("delete from artifact_chunks where digest = ? and idx < 2").run(digest).changes).toBe(2)
      const again = yield* get({ range: `bytes=${start}-` })
      expect([again.status, again.headers.get("content-range")]).toEqual([206, `bytes ${start}-${zkey.length - 1}/${zkey.length}`])
      expect([again.bytes.length, sha256(again.bytes)]).toEqual([zkey.length - start, sha256(zkey.subarray(start))])
      const boundary = yield* get({ range: `bytes=${2 * MiB}-${3 * MiB}` })
      expect([boundary.status, boundary.bytes.length, sha256(boundary.bytes)]).toEqual([206, MiB + 1, sha256(zkey.subarray(2 * MiB, 3 * MiB + 1))])
      expect((yield* get({ range: "bytes=-1" })).bytes).toEqual(zkey.subarray(zkey.length - 1))
      // While a range that needs a lost chunk, or the whole file, does not arrive.
      for (const range of [`bytes=${MiB}-`, undefined]) {
        const broken = yield* Effect.either(Effect.tryPromise(() =>
          download(baseUrl, "/circuits/large/artifacts/zkey", token, range === undefined ? {} : { range })
        ))
        expect(Either.isLeft(broken) || broken.right.status >= 500, `${range ?? "whole"}: ${Either.isRight(broken) ? broken.right.status : "failed"}`).toBe(true)
      }
    }), 60_000)

  it.scopedLive("an uploaded circuit: 409 while it builds; then its files, proven with elsewhere and verified here", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Uploader")
      const api = makeHttpClient(baseUrl, { token, timeoutMs: 60_000 })
      const get = (path: string, headers?: Record<string, string>) => Effect.promise(() => download(baseUrl, path, token, headers))

      const uploaded = yield* Effect.promise(() => uploadCircuit(baseUrl, token, "bounded_squares"))
      expect(uploaded.status).toBe(202)
      // Its build takes seconds (circom, then a phase-2 setup): asked at once, it is compiling.
      const early = yield* get("/circuits/bounded_squares/artifacts/zkey")
      expect([early.status, early.json.error.code]).toEqual([409, "circuit_not_ready"])
      yield* Effect.promise(() => settle(api, "/api/v1/circuits/bounded_squares", (c) => c.status !== "compiling", 90_000))

      const files = {} as Record<"wasm" | "zkey" | "r1cs" | "sym", Uint8Array>
      for (const kind of ["wasm", "zkey", "r1cs", "sym"] as const) {
        const got = yield* get(`/circuits/bounded_squares@1/artifacts/${kind}`)
        expect(got.status, `${kind}: ${JSON.stringify(got.json)}`).toBe(200)
        // The ETag is the SHA-256 of exactly the bytes sent.
        expect(got.headers.get("etag")).toBe(`"${sha256(got.bytes)}"`)
        expect(got.headers.get("content-disposition")).toBe(`attachment; filename="bounded_squares@1${kind === "zkey" ? ".groth16" : ""}.${kind}"`)
        files[kind] = got.bytes
      }
      // A range of a stored artifact, as of a file on disk.
      const part = yield* get("/circuits/bounded_squares/artifacts/zkey", { range: "bytes=1000-2999" })
      expect([part.status, part.headers.get("content-range")]).toEqual([206, `bytes 1000-2999/${files.zkey.length}`])
      expect(part.bytes).toEqual(files.zkey.subarray(1000, 3000))
      const program = yield* get("/circuits/bounded_squares/artifacts/noir_program")
      expect(program.json.error.details).toEqual([{ path: "kind", message: "circuit bounded_squares@1 has no noir_program; it has wasm, zkey, verification_key, r1cs, sym" }])

      // What a client-side prover does with them: snarkjs proves from the wasm and zkey, mzk verifies.
      const dir = yield* tempDir("artifacts")
      writeFileSync(join(dir, "c.wasm"), files.wasm)
      writeFileSync(join(dir, "c.zkey"), files.zkey)
      writeFileSync(join(dir, "input.json"), JSON.stringify({ xs: [1, 2, 3], bound: 10 }))
      execFileSync(snarkjsCli, ["groth16", "fullprove", "input.json", "c.wasm", "c.zkey", "proof.json", "public.json"], { cwd: dir, stdio: "pipe" })
      const verified = yield* Effect.promise(() => api.send("POST", "/api/v1/verifications", {
        body: {
          circuit: "bounded_squares@1",
          proving_system: "groth16",
          proof: JSON.parse(readFileSync(join(dir, "proof.json"), "utf8")),
          public_signals: JSON.parse(readFileSync(join(dir, "public.json"), "utf8"))
        }
      }))
      expect(verified.status, JSON.stringify(verified.json)).toBe(200)
      expect(verified.json).toMatchObject({ valid: true })
      expect(JSON.parse(readFileSync(join(dir, "public.json"), "utf8"))).toEqual(["14", "10"])
    }), 180_000)
})
