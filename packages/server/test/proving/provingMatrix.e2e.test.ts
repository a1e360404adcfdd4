// One matrix for every proving system and every way in: each system (groth16, plonk, fflonk,
// ultra_honk) × each way a circuit comes in (built in, circom or Noir sources, prebuilt artifacts,
// an archive, `./mzk circuits add`, an embedded `createMzk`) × each way a proof goes out (the proof,
// GET /verify, calldata, verifier.sol run in an EVM, POST /verifications with the key inline,
// registered, or the circuit's own, and `./mzk verify` offline). Every cell runs for real through
// the README's entry point, `./mzk` (the CLI's bundle): one `./mzk serve` on a SQLite file that
// `./mzk circuits add` writes to as well, and createMzk in this process with the same setup. A cell
// that does not apply says why in NOT_APPLICABLE; the test prints the whole table with each cell's
// result, then asserts that every applicable cell passed.
//
// The uploaded circom circuits have no constant terms, so their PLONK keys have Qc at the point at
// infinity (asserted), and the prebuilt ones are snarkjs's own setups of a gate that takes a sum (a
// wire the setup adds and the wasm does not compute): keys some ways out used to refuse.
import { compileNoir, writeDevelopmentCrs } from "@mzk/proving"
import { makeHttpClient } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe } from "vitest"
import { callContract, type CompiledContract, compileContract, deployContract } from "../../../proving/test/fixtures/evm.js"
import { MUL_SOURCE } from "../../../proving/test/fixtures/mulSource.js"
import { makeTestPtau } from "../../../proving/test/fixtures/universal.js"
import { tarGz, zip } from "../../../http/test/archives.js"
import { createMzk, type Mzk } from "../../src/createMzk.js"
import { DEV_PTAU_POWER, settle, tempDir } from "../circuits/circuits.js"
import { fetchClient, type UploadingClient, withUploads } from "../embedding/embedded.js"
import { type SnarkjsPrebuilt, snarkjsPrebuilt } from "./prebuilt.fixtures.js"
import { createAccount, type MzkRan, mzkRun, root, serveProcess } from "../processes.js"

const SYSTEMS = ["groth16", "plonk", "fflonk", "ultra_honk"] as const
type System = (typeof SYSTEMS)[number]
type CircomSystem = Exclude<System, "ultra_honk">

const WAYS_IN = ["built-in", "sources", "prebuilt", "archive", "mzk circuits add", "createMzk"] as const
type WayIn = (typeof WAYS_IN)[number]

/** "ready" is the way in itself: the upload or command ends in a ready circuit of the system. */
const WAYS_OUT = ["ready", "proof", "/verify", "calldata", "EVM", "inline", "registered", "circuit", "mzk verify"] as const
type WayOut = (typeof WAYS_OUT)[number]

const LEGEND: Record<WayOut, string> = {
  ready: "the way in ends in a ready circuit of the system (PLONK keys of uploaded circuits: Qc at infinity)",
  proof: "POST /proofs completes with the expected public inputs",
  "/verify": "GET /proofs/{id}/verify: valid",
  calldata: "GET /proofs/{id}/calldata: the system's verifier function and the proof's public signals",
  EVM: "GET /circuits/{name}/verifier.sol compiled by solc, run in @ethereumjs/evm: the calldata true, a public signal changed false",
  inline: "POST /verifications with the circuit's key inline: valid; a public signal changed: valid false (createMzk: verify() too)",
  registered: "POST /verification-keys, then POST /verifications by its id: valid; changed: valid false",
  circuit: "POST /verifications naming the circuit (its own key): valid, naming the proof; changed: valid false",
  "mzk verify": "./mzk verify offline with the circuit's key, the proof and its signals: exit 0; on each system's sources row also a signal changed: exit 1 (\"+ exit 1\")"
}

/**
 * The row of each system where `./mzk verify` is also shown a changed signal. Once a system is
 * enough: the command's verdict is the Verifier's, the one POST /verifications runs, which every
 * row checks with a changed signal (inline, registered, by circuit); each run of the command is a
 * process start that loads snarkjs or bb.js (2–3 s of CPU), the costliest cell of the matrix.
 */
const OFFLINE_REFUSAL: WayIn = "sources"

/** Cells that do not apply, and why: a whole row (`"*"`) or single ways out. */
const NOT_APPLICABLE: Partial<Record<`${WayIn} × ${System}`, Partial<Record<WayOut | "*", string>>>> = {
  "built-in × ultra_honk": { "*": "no built-in Noir circuit: the built-in circuits are circom" }
}

const notApplicable = (wayIn: WayIn, system: System, out: WayOut): string | undefined => {
  const row = NOT_APPLICABLE[`${wayIn} × ${system}`]
  return row?.["*"] ?? row?.[out]
}

const NOIR_SUM = {
  "Nargo.toml": `[package]\nname = "sum"\ntype = "bin"\nauthors = [""]\n`,
  "src/main.nr": "fn main(x: Field, y: pub Field) -> pub Field {\n    assert(x != y);\n    x + y\n}\n"
}

/** What a circuit's proofs are asked with and must show: `c = a·b` (or `(a + b)·d`) = 33; Noir's `y` = 4 and `x + y`. */
interface Case {
  readonly inputs: Record<string, number>
  readonly public: Record<string, string>
  readonly signals: ReadonlyArray<string>
}
const MUL: Case = { inputs: { a: 3, b: 11 }, public: { c: "33" }, signals: ["33"] }
const SUM_TIMES: Case = { inputs: { a: 4, b: 7, d: 3 }, public: { c: "33" }, signals: ["33"] }
/**
 * A Noir program's proof of `x`: each way in proves another `x`, because UltraHonk proofs carry no
 * blinding: the same program, CRS and inputs make the same bytes, which POST /verifications
 * recognises as the first proof made of them.
 */
const noir = (x: number): Case => ({ inputs: { x, y: 4 }, public: { y: "4", return: String(x + 4) }, signals: ["4", String(x + 4)] })

/** The last public signal one more: what every tampered check sends. */
const changed = (signals: ReadonlyArray<string>) => [...signals.slice(0, -1), (BigInt(signals.at(-1)!) + 1n).toString()]

const FUNCTIONS: Record<System, string> = {
  groth16: "verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[1])",
  plonk: "verifyProof(uint256[24],uint256[1])",
  fflonk: "verifyProof(bytes32[24],uint256[1])",
  ultra_honk: "verify(bytes,bytes32[])"
}

const INFINITY_G1 = ["0", "1", "0"]
const OTHER: Record<CircomSystem, CircomSystem> = { groth16: "plonk", plonk: "fflonk", fflonk: "groth16" }

/** At most `width` tasks at once; the rest wait their turn. */
const lane = (width: number) => {
  let free = width
  const waiting: Array<() => void> = []
  return async <A>(task: () => Promise<A>): Promise<A> => {
    if (free > 0) free--
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next === undefined) free++
      else next()
    }
  }
}

/** What the rows share: one server, one embedded mzk, one setup, and the files and artifacts the ways in send. */
interface Shared {
  readonly work: string
  readonly crsDir: string
  readonly database: string
  readonly circuitFlags: ReadonlyArray<string>
  readonly server: UploadingClient
  readonly serverAccount: string
  readonly embedded: { readonly mzk: Mzk; readonly api: UploadingClient; readonly account: string }
  readonly prebuilt: SnarkjsPrebuilt
  readonly noirProgram: string
  readonly files: { readonly mul: string; readonly noirProject: string }
}

/** A ready circuit, where its proofs are asked for, and the key its owner holds. */
interface Admitted {
  readonly api: UploadingClient
  readonly name: string
  readonly request: Record<string, unknown>
  readonly key: Record<string, any>
  readonly case: Case
  readonly note?: string
}

const form = (name: string, fields: Record<string, string>, files: ReadonlyArray<readonly [string, string | Uint8Array, string]>) => {
  const body = new FormData()
  body.append("name", name)
  for (const [field, value] of Object.entries(fields)) body.append(field, value)
  for (const [field, content, filename] of files) body.append(field, new Blob([content]), filename)
  return body
}

/**
 * The circuit's record once it left `compiling`, asserted ready for `system`, and its key. Every
 * circuit the matrix uploads lacks constant terms: a PLONK key's Qc is asserted at infinity.
 */
const ready = async (api: UploadingClient, name: string, system: System) => {
  const circuit = await settle(api, `/api/v1/circuits/${name}`, (c) => c.status !== "compiling", 400_000, POLL_MS)
  expect(circuit, JSON.stringify(circuit.error)).toMatchObject({ status: "ready", proving_system: system })
  if (system === "plonk") expect(circuit.verification_key.Qc).toEqual(INFINITY_G1)
  return { key: circuit.verification_key as Record<string, any>, ...(system === "plonk" ? { note: "Qc ∞" } : {}) }
}

const uploaded = async (api: UploadingClient, name: string, system: System, body: FormData) => {
  const created = await api.upload(body)
  expect(created.status, JSON.stringify(created.json)).toBe(202)
  expect(created.json.proving_system).toBe(system)
  return { api, name, request: { type: name }, ...await ready(api, name, system) }
}

const sources = (name: string, system: System) =>
  system === "ultra_honk"
    ? form(name, {}, Object.entries(NOIR_SUM).map(([path, text]) => ["noir_sources", text, path] as const))
    : form(name, { proving_system: system }, [["main", MUL_SOURCE, "main.circom"]])

/** Builds and proofs take seconds to minutes here: 23 rows polling ten times a second would cost the server more than they tell. */
const POLL_MS = 500

const cliLane = lane(2)
const offlineLane = lane(3)

const WAYS: Record<WayIn, (shared: Shared, system: System, name: string) => Promise<Admitted>> = {
  "built-in": async ({ server }, system) => {
    const circuit = (await server.send("GET", "/api/v1/circuits/multiplier")).json
    expect(circuit.proving_systems).toContain(system)
    // GET /circuits/multiplier shows the key of its default system (groth16); the package publishes the others'.
    const key = system === "groth16"
      ? circuit.verification_key
      : JSON.parse(readFileSync(join(root, "packages", "proving", "build", "multiplier", `verification_key.${system}.json`), "utf8"))
    return { api: server, name: "multiplier", request: { type: "multiplier", proving_system: system }, key, case: MUL }
  },
  sources: async ({ server }, system, name) => ({
    ...await uploaded(server, name, system, sources(name, system)),
    case: system === "ultra_honk" ? noir(10) : MUL
  }),
  prebuilt: async ({ noirProgram, prebuilt, server }, system, name) => {
    if (system === "ultra_honk") {
      return { ...await uploaded(server, name, system, form(name, {}, [["noir_program", noirProgram, "sum.json"]])), case: noir(11) }
    }
    const parts = (zkey: Uint8Array) =>
      [["wasm", prebuilt.wasm, "circuit.wasm"], ["zkey", zkey, "circuit.zkey"], ["sym", prebuilt.sym, "circuit.sym"]] as const
    // A zkey named as another system is refused at once, naming the field, nothing stored.
    const wrong = await server.upload(form(`${name}_wrong`, { proving_system: OTHER[system] }, parts(prebuilt.zkeys[system]!)))
    expect([wrong.status, wrong.json.error?.details?.[0]?.path], JSON.stringify(wrong.json)).toEqual([400, "proving_system"])
    // The system is read from the zkey.
    const sample = ["sample_inputs", JSON.stringify(SUM_TIMES.inputs), "input.json"] as const
    return { ...await uploaded(server, name, system, form(name, {}, [...parts(prebuilt.zkeys[system]!), sample])), case: SUM_TIMES }
  },
  archive: async ({ server }, system, name) => {
    if (system === "ultra_honk") {
      // A Noir project packed as `tar czf`: Nargo.toml at its root names it a Noir project.
      const archive = tarGz(Object.entries(NOIR_SUM).map(([path, content]) => ({ path, content })))
      return { ...await uploaded(server, name, system, form(name, {}, [["archive", archive, "sum.tgz"]])), case: noir(12) }
    }
    // zip for Groth16 and FFLONK, tar.gz for PLONK: both formats, each main in a folder of the archive.
    const entries = [{ path: "mul/main.circom", content: MUL_SOURCE }]
    const [archive, file] = system === "plonk" ? [tarGz(entries), "mul.tgz"] : [zip(entries), "mul.zip"]
    return { ...await uploaded(server, name, system, form(name, { main: "mul/main.circom", proving_system: system }, [["archive", archive, file]])), case: MUL }
  },
  "mzk circuits add": async ({ circuitFlags, database, files, server, serverAccount, work }, system, name) => {
    const ran = await cliLane(async () => {
      const started = Date.now()
      const ran = await mzkRun("bundle", [
        "circuits", "add", name, "--account", serverAccount, "--database", database, ...circuitFlags,
        "--cache-dir", join(work, `cache-${name}`), "--json",
        ...(system === "ultra_honk" ? ["--noir", files.noirProject] : ["--circom", files.mul, "--proving-system", system])
      ])
      clock.cli.ms += Date.now() - started
      clock.cli.runs++
      return ran
    })
    expect(ran.code, ran.stderr).toBe(0)
    expect(JSON.parse(ran.stdout)).toMatchObject({ name, status: "ready", proving_system: system })
    // Served by the server over the same database.
    return { api: server, name, request: { type: name }, ...await ready(server, name, system), case: system === "ultra_honk" ? noir(13) : MUL }
  },
  createMzk: async ({ embedded }, system, name) => ({
    ...await uploaded(embedded.api, name, system, sources(name, system)),
    case: system === "ultra_honk" ? noir(14) : MUL
  })
}

const SLUG: Record<WayIn, string> = {
  "built-in": "builtin",
  sources: "sources",
  prebuilt: "prebuilt",
  archive: "archive",
  "mzk circuits add": "cli",
  createMzk: "embedded"
}

type Outcome = { readonly ok: true; readonly note?: string | undefined } | { readonly ok: false; readonly message: string }

/** Time spent, for the report: each phase's end since the start, and what the shared tools cost in all. */
const clock = {
  start: 0,
  setup: 0,
  ready: 0,
  proved: 0,
  done: 0,
  solc: { ms: 0, compiles: 0, reused: 0 },
  offline: { ms: 0, runs: 0 },
  cli: { ms: 0, runs: 0 }
}
const since = () => Date.now() - clock.start

/** Every verifier.sol compiled once: the same source (the same key) is the same bytecode. */
const compiledSources = new Map<string, CompiledContract>()
const compiledOnce = (source: string) => {
  const known = compiledSources.get(source)
  if (known !== undefined) {
    clock.solc.reused++
    return known
  }
  const contract = /^contract (\w+)/m.exec(source)![1]!
  const started = Date.now()
  const compiled = compileContract(source, contract)
  clock.solc.ms += Date.now() - started
  clock.solc.compiles++
  compiledSources.set(source, compiled)
  return compiled
}

/** Runs one row: its way in, its proof, then every way out at once; each cell's outcome recorded. */
const runRow = async (shared: Shared, wayIn: WayIn, system: System, record: (out: WayOut, outcome: Outcome) => void) => {
  try {
    await runCells(shared, wayIn, system, record)
  } finally {
    rowDone.set(`${wayIn} × ${system}`, since())
  }
}

/** When each row's last cell ended, since the start. */
const rowDone = new Map<string, number>()

const runCells = async (shared: Shared, wayIn: WayIn, system: System, record: (out: WayOut, outcome: Outcome) => void) => {
  const cell = async <A>(out: WayOut, check: () => Promise<A>, note?: (a: A) => string | undefined): Promise<A | undefined> => {
    try {
      const value = await check()
      record(out, { ok: true, note: note?.(value) })
      return value
    } catch (error) {
      record(out, { ok: false, message: (error instanceof Error ? error.message : String(error)).split("\n").slice(0, 6).join(" ") })
      return undefined
    }
  }
  const skipped = (outs: ReadonlyArray<WayOut>, why: string) => outs.forEach((out) => record(out, { ok: false, message: `not reached: ${why}` }))
  const name = `${SLUG[wayIn]}_${system}`
  const admitted = await cell("ready", () => WAYS[wayIn](shared, system, name), (a) => a.note)
  clock.ready = Math.max(clock.ready, since())
  if (admitted === undefined) return skipped(WAYS_OUT.slice(1), "no ready circuit")
  const { api } = admitted
  const expected = admitted.case
  const proof = await cell("proof", async () => {
    const created = await api.send("POST", "/api/v1/proofs", { body: { ...admitted.request, inputs: expected.inputs } })
    expect(created.status, created.text).toBe(202)
    const settled = await settle(api, `/api/v1/proofs/${created.json.proof_id}`, (p) => p.status === "completed" || p.status === "failed", 400_000, POLL_MS)
    expect(settled, JSON.stringify(settled.error)).toMatchObject({ status: "completed", proving_system: system, public_inputs: expected.public })
    return settled as { proof_id: string; proof_blob: string }
  })
  clock.proved = Math.max(clock.proved, since())
  if (proof === undefined) return skipped(WAYS_OUT.slice(2), "no proof")

  const blob = JSON.parse(Buffer.from(proof.proof_blob, "base64").toString("utf8")) as Record<string, unknown>
  const signals = expected.signals
  const body = (key: Record<string, unknown>, publicSignals: ReadonlyArray<string>) => ({ proving_system: system, ...key, proof: blob, public_signals: publicSignals })
  /** POST /verifications of `key` (inline, by id or by circuit) with the signals, then with one changed: valid, then not. */
  const verifies = async (key: Record<string, unknown>) => {
    const good = await api.send("POST", "/api/v1/verifications", { body: body(key, signals) })
    expect([good.status, good.json.valid], good.text).toEqual([200, true])
    const bad = await api.send("POST", "/api/v1/verifications", { body: body(key, changed(signals)) })
    expect([bad.status, bad.json.valid], bad.text).toEqual([200, false])
    return good.json as { proof_id: string | null }
  }

  await Promise.all([
    cell("/verify", async () => {
      const verified = await api.send("GET", `/api/v1/proofs/${proof.proof_id}/verify`)
      expect([verified.status, verified.json.valid, verified.json.proving_system], verified.text).toEqual([200, true, system])
    }),
    (async () => {
      const calldata = await cell("calldata", async () => {
        const answer = await api.send("GET", `/api/v1/proofs/${proof.proof_id}/calldata`)
        expect(answer.status, answer.text).toBe(200)
        expect(answer.json.function).toBe(FUNCTIONS[system])
        expect((answer.json.arguments.at(-1) as Array<string>).map((s) => BigInt(s).toString())).toEqual(signals)
        return answer.json as { function: string; calldata: string }
      })
      if (calldata === undefined) return skipped(["EVM"], "no calldata")
      await cell("EVM", async () => {
        const query = "proving_system" in admitted.request ? `?proving_system=${system}` : ""
        const sol = await api.send("GET", `/api/v1/circuits/${admitted.name}/verifier.sol${query}`)
        expect(sol.status, sol.text.slice(0, 500)).toBe(200)
        const compiled = compiledOnce(sol.text)
        expect(compiled.selectors[calldata.function]).toBe(calldata.calldata.slice(2, 10))
        const chain = await deployContract(compiled.bytecode, { oversized: system === "ultra_honk" })
        const accepted = await callContract(chain, calldata.calldata)
        expect([accepted.exceptionError, BigInt(accepted.returned)]).toEqual([undefined, 1n])
        // The calldata's last word is the last public signal.
        const last = BigInt(`0x${calldata.calldata.slice(-64)}`)
        const refused = await callContract(chain, `${calldata.calldata.slice(0, -64)}${(last + 1n).toString(16).padStart(64, "0")}`)
        expect(refused.exceptionError === undefined && BigInt(refused.returned) === 1n).toBe(false)
        return accepted.gas
      }, (gas) => `${gas} gas`)
    })(),
    cell("inline", async () => {
      await verifies({ verification_key: admitted.key })
      if (api === shared.embedded.api) {
        const { account, mzk } = shared.embedded
        expect((await mzk.verify(account, body({ verification_key: admitted.key }, signals))).valid).toBe(true)
        expect((await mzk.verify(account, body({ verification_key: admitted.key }, changed(signals)))).valid).toBe(false)
      }
    }),
    cell("registered", async () => {
      const registered = await api.send("POST", "/api/v1/verification-keys", { body: { proving_system: system, verification_key: admitted.key, name } })
      expect(registered.status, registered.text).toBe(201)
      await verifies({ verification_key_id: registered.json.id })
    }),
    cell("circuit", async () => {
      const verified = await verifies({ circuit: admitted.name })
      expect(verified.proof_id).toBe(proof.proof_id)
    }),
    cell("mzk verify", async () => {
      const dir = join(shared.work, "offline", name)
      mkdirSync(dir, { recursive: true })
      const file = (what: string, value: unknown) => {
        writeFileSync(join(dir, what), JSON.stringify(value))
        return join(dir, what)
      }
      const args = [
        "verify", "--proving-system", system, "--json", "--verification-key", file("vk.json", admitted.key), "--proof", file("proof.json", blob),
        ...(system === "ultra_honk" ? ["--noir-crs", shared.crsDir] : [])
      ]
      const offline = (publicFile: string) =>
        offlineLane(async () => {
          const started = Date.now()
          const ran = await mzkRun("bundle", [...args, "--public", publicFile])
          clock.offline.ms += Date.now() - started
          clock.offline.runs++
          return ran
        })
      const answer = (ran: MzkRan) => [ran.code, ran.stdout === "" ? ran.stderr : JSON.parse(ran.stdout)]
      const [valid, tampered] = await Promise.all([
        offline(file("public.json", signals)),
        wayIn === OFFLINE_REFUSAL ? offline(file("changed.json", changed(signals))) : undefined
      ])
      expect(answer(valid)).toEqual([0, { valid: true, proving_system: system }])
      if (tampered !== undefined) expect(answer(tampered)).toEqual([1, { valid: false, proving_system: system }])
      return tampered !== undefined
    }, (refused) => refused ? "+ exit 1" : undefined)
  ])
  clock.done = Math.max(clock.done, since())
}

/** The matrix as text: a row per way in × system, ✓ / ✗ / n/a per way out, then the notes, reasons and failures. */
const render = (outcomes: Map<string, Outcome>) => {
  const width = [16, 10, ...WAYS_OUT.map((out) => Math.max(out.length, out === "EVM" ? 13 : 7)), 5]
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(" | ")} |`
  const rows = [line(["way in", "system", ...WAYS_OUT, "done"]), line(width.map((w) => "-".repeat(w)))]
  const notes: Array<string> = []
  for (const wayIn of WAYS_IN) {
    for (const system of SYSTEMS) {
      const cells = WAYS_OUT.map((out) => {
        const why = notApplicable(wayIn, system, out)
        if (why !== undefined) return "n/a"
        const outcome = outcomes.get(`${wayIn} × ${system} × ${out}`)
        if (outcome === undefined) return "?"
        if (!outcome.ok) {
          notes.push(`✗ ${wayIn} × ${system} × ${out}: ${outcome.message}`)
          return "✗"
        }
        return outcome.note === undefined ? "✓" : `✓ ${outcome.note}`
      })
      const done = rowDone.get(`${wayIn} × ${system}`)
      rows.push(line([wayIn, system, ...cells, done === undefined ? "" : `${Math.round(done / 1000)} s`]))
      for (const [out, why] of Object.entries(NOT_APPLICABLE[`${wayIn} × ${system}`] ?? {})) notes.push(`n/a ${wayIn} × ${system} × ${out === "*" ? "every way out" : out}: ${why}`)
    }
  }
  return [...rows, "", ...WAYS_OUT.map((out) => `${out}: ${LEGEND[out]}`), "", ...notes].join("\n")
}

describe("every proving system × every way in × every way out, through ./mzk", () => {
  it.scopedLive("each applicable cell proves and verifies; each other cell says why it does not apply", () =>
    Effect.gen(function*() {
      clock.start = Date.now()
      const work = yield* tempDir("matrix")
      const crsDir = join(work, "crs")
      const ptauDir = join(work, "ptau")
      const database = `sqlite:${join(work, "mzk.db")}`
      mkdirSync(ptauDir)
      mkdirSync(join(work, "prebuilt"))

      // One powers of tau for everything: the prebuilt setups', and the development one every
      // process builds with (as mzk makes it: an accumulator, one contribution, phase 2 prepared),
      // put where they look for it so no two of them make their own at once.
      const ptau = yield* Effect.promise(() => makeTestPtau(join(work, "prebuilt"), DEV_PTAU_POWER))
      copyFileSync(ptau, join(ptauDir, `dev_pot${DEV_PTAU_POWER}.ptau`))
      // The circuit settings `serve` and `circuits add` share: every upload of the account may be building at once.
      const circuitFlags = [
        "--dev-ptau", "--dev-ptau-power", String(DEV_PTAU_POWER), "--dev-ptau-dir", ptauDir, "--noir-crs", crsDir, "--max-compiling-per-account", "16"
      ]
      // The CRS first: the server checks it at start. 2^12 + 1 points: Noir programs pad to 2^12 gates.
      yield* Effect.promise(() => writeDevelopmentCrs(crsDir, 2 ** 12 + 1))
      const [prebuilt, noir, server] = yield* Effect.all([
        Effect.promise(() => snarkjsPrebuilt(join(work, "prebuilt"), ["groth16", "plonk", "fflonk"], ptau)),
        Effect.promise(() => compileNoir(NOIR_SUM)),
        serveProcess(database, {
          entry: "bundle",
          upWithinMs: 120_000,
          // ~150 metered requests (proofs, verifications, key registrations) from one key in a few minutes.
          args: [
            ...circuitFlags, "--cache-dir", join(work, "serve-cache"), "--build-concurrency", "2",
            "--proofs-per-minute-per-key", "1000", "--proof-timeout", "5m"
          ]
        })
      ], { concurrency: "unbounded" })
      if (!noir.ok) throw new Error(noir.message)
      const account = createAccount(database, "Matrix", "bundle")

      const mzk = yield* Effect.acquireRelease(
        Effect.promise(() =>
          createMzk({
            database: `sqlite:${join(work, "embedded.db")}`,
            circuits: {
              developmentPtau: { power: DEV_PTAU_POWER, dir: ptauDir },
              noirCrs: crsDir,
              cacheDir: join(work, "embedded-cache"),
              maxCompilingPerAccount: 16
            },
            limits: { proofRequestsPerMinutePerKey: 1000 },
            proofs: { timeoutMs: 300_000 },
            proverThreads: 1,
            // Its log lines would bury the table; a failing cell says what went wrong.
            logger: { info: () => undefined, warn: () => undefined, error: () => undefined }
          })),
        (mzk) => Effect.promise(() => mzk.stop())
      )
      yield* Effect.promise(() => mzk.start())
      const embeddedAccount = yield* Effect.promise(() => mzk.createAccount({ name: "Embedded matrix" }))

      mkdirSync(join(work, "mul"))
      writeFileSync(join(work, "mul", "main.circom"), MUL_SOURCE)
      for (const [path, text] of Object.entries(NOIR_SUM)) {
        mkdirSync(join(work, "noir", "src"), { recursive: true })
        writeFileSync(join(work, "noir", path), text)
      }
      const shared: Shared = {
        work,
        crsDir,
        database,
        circuitFlags,
        // A connection per request: this process's loop is held for seconds at a time (solc), long
        // enough for the server to close an idle kept-alive socket under a request about to use it.
        server: withUploads(makeHttpClient(server.baseUrl, { token: account.api_key, timeoutMs: 120_000, keepAlive: false })),
        serverAccount: account.account_id,
        embedded: { mzk, api: withUploads(fetchClient(mzk.fetch, "http://embedded.test", embeddedAccount.api_key)), account: embeddedAccount.account_id },
        prebuilt,
        noirProgram: JSON.stringify(noir.program),
        files: { mul: join(work, "mul", "main.circom"), noirProject: join(work, "noir") }
      }
      clock.setup = since()

      const outcomes = new Map<string, Outcome>()
      const rows = WAYS_IN.flatMap((wayIn) => SYSTEMS.map((system) => [wayIn, system] as const))
      yield* Effect.promise(() =>
        Promise.all(rows.filter(([wayIn, system]) => notApplicable(wayIn, system, "ready") === undefined).map(([wayIn, system]) =>
          runRow(shared, wayIn, system, (out, outcome) => outcomes.set(`${wayIn} × ${system} × ${out}`, outcome))
        ))
      )

      // One Noir upload once ended the server: the same process answered everything.
      expect(server.child.exitCode, server.output().slice(-3000)).toBeNull()
      const table = render(outcomes)
      const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
      console.log([
        table,
        "",
        `setup (ptau, CRS, prebuilt setups, Noir compile, ./mzk serve, createMzk) done at ${seconds(clock.setup)}`,
        `every way in ready at ${seconds(clock.ready)}, every proof at ${seconds(clock.proved)}, every way out at ${seconds(clock.done)}`,
        `solc: ${clock.solc.compiles} compiles in ${seconds(clock.solc.ms)} (${clock.solc.reused} verifier.sol sources seen again, compiled once)`,
        `./mzk circuits add: ${clock.cli.runs} runs, ${seconds(clock.cli.ms)} of process time in all (2 at once)`,
        `./mzk verify: ${clock.offline.runs} runs, ${seconds(clock.offline.ms)} of process time in all (3 at once)`
      ].join("\n"))

      // Every applicable cell ran and passed; every other one has its reason.
      const applicable = rows.flatMap(([wayIn, system]) => WAYS_OUT.filter((out) => notApplicable(wayIn, system, out) === undefined).map((out) => `${wayIn} × ${system} × ${out}`))
      expect(applicable.filter((cell) => !outcomes.has(cell)), "cells that never ran").toEqual([])
      expect(applicable.flatMap((cell) => {
        const outcome = outcomes.get(cell)!
        return outcome.ok ? [] : [`${cell}: ${outcome.message}`]
      }), table).toEqual([])
      for (const row of Object.values(NOT_APPLICABLE)) for (const why of Object.values(row)) expect(why.length).toBeGreaterThan(10)
    }), 900_000)
})
