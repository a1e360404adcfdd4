/**
 * A real large circuit through the HTTP API, end to end (not a test): `mzk serve` in its own
 * process on SQLite (a temporary file), its workers proving natively at the default budget; the
 * circuit's prebuilt wasm, zkey and sym streamed from disk as one upload; the build's checks until
 * `ready`; one proof until `completed`; the proof checked with the snarkjs CLI. Prints the server's
 * peak RSS growth during the upload, the time to ready, the proof's time and the server's peak RSS
 * while proving. The circuit comes from `packages/proving/bench/large.ts`'s cache:
 *
 *   pnpm bench packages/server/bench/large-circuit.ts ~/.cache/mzk-bench/mimc_20
 *
 * (a folder holding `<name>.zkey`, `<name>_js/<name>.wasm`, `<name>.sym`, `input.json` and
 * `verification_key.json`, named after the folder). `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts), in
 * place of the folder: a MiMC chain of 2^10 that large.ts's cache code prepares (in $MZK_BENCH_CACHE).
 */
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { performance } from "node:perf_hooks"
import { memoryOf, resetPeak } from "../test/circuits/bigUpload.js"
import { createAccount, serveProcess, tempSqlite } from "../test/processes.js"
import { prepareBenchArtifacts } from "../../proving/bench/circuits/artifacts.js"
import { benchCircuit } from "../../proving/bench/circuits/sources.js"

const MiB = 1024 * 1024
const dir = process.argv[2] === "--smoke" ? (await prepareBenchArtifacts(benchCircuit("mimc", 10))).dir : process.argv[2]
if (dir === undefined) throw new Error("usage: large-circuit.ts <circuit folder> | --smoke")
const name = basename(dir)
const files = {
  wasm: join(dir, `${name}_js`, `${name}.wasm`),
  zkey: join(dir, `${name}.zkey`),
  sym: join(dir, `${name}.sym`)
}

/** The multipart body streamed from the files: nothing of them is held whole on this side either. */
const upload = (baseUrl: string, token: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const boundary = "mzk-large-circuit-7c1e"
    const head = (field: string, file: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${basename(file)}"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`
    const parts = Object.entries(files).map(([field, file]) => ({ head: Buffer.from(head(field, file)), file, size: statSync(file).size }))
    const nameField = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${name}\r\n`)
    const tail = Buffer.from(`--${boundary}--\r\n`)
    const length = nameField.length + parts.reduce((n, p) => n + p.head.length + p.size + 2, 0) + tail.length
    const req = request(`${baseUrl}/api/v1/circuits`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(length) }
    })
    req.on("error", reject)
    req.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
    })
    const send = async () => {
      req.write(nameField)
      for (const part of parts) {
        req.write(part.head)
        for await (const chunk of createReadStream(part.file, { highWaterMark: MiB })) {
          if (!req.write(chunk)) await new Promise((r) => req.once("drain", r))
        }
        req.write("\r\n")
      }
      req.end(tail)
    }
    send().catch(reject)
  })

const json = async (baseUrl: string, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const waitFor = async <A>(what: string, poll: () => Promise<A | undefined>, withinMs: number): Promise<A> => {
  const deadline = performance.now() + withinMs
  for (;;) {
    const found = await poll()
    if (found !== undefined) return found
    if (performance.now() > deadline) throw new Error(`${what}: not within ${withinMs / 1000} s`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

console.log(`large circuit through the API: ${name}; zkey ${(statSync(files.zkey).size / MiB).toFixed(0)} MiB, ` +
  `wasm ${(statSync(files.wasm).size / MiB).toFixed(1)} MiB, sym ${(statSync(files.sym).size / MiB).toFixed(1)} MiB; node ${process.version}`)
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const { database } = yield* tempSqlite("large-circuit")
  const { api_key } = createAccount(database, "Large circuit")
  const server = yield* serveProcess(database, {
    args: ["--max-upload-size", "2GiB", "--build-timeout", "60m", "--proof-timeout", "60m", "--prover-threads", "2"]
  })
  const pid = server.child.pid!
  yield* Effect.promise(async () => {
    const before = memoryOf(pid)
    const reset = resetPeak(pid)
    let start = performance.now()
    const sent = await upload(server.baseUrl, api_key)
    if (sent.status !== 202) throw new Error(`upload answered ${sent.status}: ${sent.body}`)
    const uploadSeconds = (performance.now() - start) / 1000
    const afterUpload = memoryOf(pid)
    console.log(`upload: ${uploadSeconds.toFixed(1)} s; server RSS ${(before.rss / MiB).toFixed(0)} MiB before, peak growth ` +
      `${((afterUpload.peak - before.rss) / MiB).toFixed(0)} MiB${reset ? "" : " (peak not reset: whole-life peak)"}`)
    const ready = await waitFor("ready", async () => {
      const got = await json(server.baseUrl, api_key, "GET", `/api/v1/circuits/${name}`)
      if (got.body["status"] === "failed") throw new Error(`build failed: ${JSON.stringify(got.body["error"])}`)
      return got.body["status"] === "ready" ? got.body : undefined
    }, 60 * 60_000)
    console.log(`ready ${((performance.now() - start) / 1000).toFixed(1)} s after the upload began (${String(ready["constraints"])} constraints)`)

    const beforeProof = memoryOf(pid)
    resetPeak(pid)
    start = performance.now()
    const inputs = JSON.parse(readFileSync(join(dir, "input.json"), "utf8")) as unknown
    const created = await json(server.baseUrl, api_key, "POST", "/api/v1/proofs", { type: name, inputs })
    if (created.status !== 202) throw new Error(`proof request answered ${created.status}: ${JSON.stringify(created.body)}`)
    const id = String(created.body["proof_id"])
    const done = await waitFor("proof", async () => {
      const got = await json(server.baseUrl, api_key, "GET", `/api/v1/proofs/${id}`)
      if (got.body["status"] === "failed") throw new Error(`proof failed: ${JSON.stringify(got.body["error"])}`)
      return got.body["status"] === "completed" ? got.body : undefined
    }, 60 * 60_000)
    const proofSeconds = (performance.now() - start) / 1000
    const afterProof = memoryOf(pid)
    console.log(`proof: completed ${proofSeconds.toFixed(1)} s after the request (duration_ms ${String(done["duration_ms"])}, the key's first load ` +
      `included); server RSS ${(beforeProof.rss / MiB).toFixed(0)} MiB before, peak ${(afterProof.peak / MiB).toFixed(0)} MiB while proving`)

    const work = mkdtempSync(join(tmpdir(), "mzk-large-verify-"))
    try {
      writeFileSync(join(work, "proof.json"), Buffer.from(String(done["proof_blob"]), "base64"))
      const publicSignals = (ready["public_signals"] as Array<string>).map((signal) => (done["public_inputs"] as Record<string, string>)[signal])
      writeFileSync(join(work, "public.json"), JSON.stringify(publicSignals))
      const snarkjs = join(import.meta.dirname, "../../proving/node_modules/.bin/snarkjs")
      const out = execFileSync(snarkjs, ["groth16", "verify", join(dir, "verification_key.json"), join(work, "public.json"), join(work, "proof.json")], { encoding: "utf8" })
      if (!out.includes("OK")) throw new Error(`snarkjs groth16 verify refused the proof: ${out.trim()}`)
      console.log("snarkjs groth16 verify: OK")
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  })
})))
