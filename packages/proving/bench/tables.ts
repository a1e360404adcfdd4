// The native prover's tables: memory budget and disk cache (not a test).
//   pnpm bench packages/proving/bench/tables.ts [--log 16] [--threads 1] [--proofs 3] [--budgets 1,1.5,2,4]
//     [--cache 2,4] [--unbounded yes]
//
// A synthetic key of about 2^log constraints (domain 2^log, nVars = 2^log - 2^(log-4), four
// coefficients per constraint, points tiled from merkle_membership's key: proving cost does not
// depend on which points they are; its proofs verify against nothing, so they are timed, not
// checked; the tests prove real keys) and a random witness, in <tmpdir>/mzk-bench-tables. Each row
// is a fresh process (packages/proving/bench/tablesChild.mjs) that loads the key from its file and proves
// it --proofs times: load time, first (cold) and best later (warm) proof, peak RSS of the whole
// process and its growth over the RSS before the load (Node's own ~45 MB excluded).
//   1. budgets: unbounded (the old default: tables up to 1 GiB), then the smallest budget the key
//      accepts ("needs at least N MiB", from its refusal), then a few between;
//   2. the disk cache at the default budget: the process that builds and writes the tables, then a
//      fresh one that maps them: its load time and first proof against a warm proof.
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildFilesOf } from "../src/catalog.js"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1]! : fallback
}
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): a 2^10 key, the least budget and one cache row, two proofs a row.
const SMOKE = process.argv.includes("--smoke")
const LOG = Number(arg("--log", SMOKE ? "10" : "16"))
const THREADS = Number(arg("--threads", "1"))
const PROOFS = Number(arg("--proofs", SMOKE ? "2" : "3"))
// Budgets as multiples of the least one; the unbounded row (minutes of building at 2^18) optional.
const FACTORS = arg("--budgets", SMOKE ? "1" : "1,1.5,2,4").split(",").map(Number)
const CACHE_FACTORS = arg("--cache", SMOKE ? "2" : "2,4").split(",").map(Number)
const UNBOUNDED = arg("--unbounded", SMOKE ? "no" : "yes") === "yes"
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
const CHILD = join(dirname(fileURLToPath(import.meta.url)), "tablesChild.mjs")

// --- the synthetic key ------------------------------------------------------------------------
const sections = (bytes: Buffer) => {
  const out = new Map<number, Buffer>()
  let pos = 12
  for (let i = 0; i < bytes.readUInt32LE(8); i++) {
    const type = bytes.readUInt32LE(pos)
    const size = Number(bytes.readBigUInt64LE(pos + 4))
    out.set(type, bytes.subarray(pos + 12, pos + 12 + size))
    pos += 12 + size
  }
  return out
}
const section = (type: number, body: Buffer) => {
  const head = Buffer.alloc(12)
  head.writeUInt32LE(type, 0)
  head.writeBigUInt64LE(BigInt(body.length), 4)
  return [head, body]
}
const tile = (from: Buffer, pointBytes: number, count: number) => {
  const out = Buffer.alloc(count * pointBytes)
  const have = from.length / pointBytes
  for (let i = 0; i < count; i++) from.copy(out, i * pointBytes, (i % have) * pointBytes, (i % have + 1) * pointBytes)
  return out
}
const randomBelowR = () => {
  for (;;) {
    const b = randomBytes(32)
    b[31]! &= 0x3f
    if (BigInt("0x" + Buffer.from(b).reverse().toString("hex")) < R) return b
  }
}

const dir = join(tmpdir(), "mzk-bench-tables")
mkdirSync(dir, { recursive: true })
const zkeyPath = join(dir, `synthetic-${LOG}.zkey`)
const wtnsPath = join(dir, `synthetic-${LOG}.wtns`)
const domain = 2 ** LOG
const nVars = domain - 2 ** (LOG - 4)
if (!existsSync(zkeyPath) || !existsSync(wtnsPath)) {
  const merkle = sections(readFileSync(buildFilesOf("merkle_membership").zkey))
  const header = Buffer.from(merkle.get(2)!)
  header.writeUInt32LE(nVars, 72)
  header.writeUInt32LE(1, 76)
  header.writeUInt32LE(domain, 80)
  const constraints = nVars - 2
  const coefs = Buffer.alloc(4 + constraints * 4 * 44)
  coefs.writeUInt32LE(constraints * 4, 0)
  let at = 4
  for (let c = 0; c < constraints; c++) {
    for (const matrix of [0, 0, 0, 1]) {
      coefs.writeUInt32LE(matrix, at)
      coefs.writeUInt32LE(c, at + 4)
      coefs.writeUInt32LE(1 + Math.floor(Math.random() * (nVars - 1)), at + 8)
      randomBelowR().copy(coefs, at + 12)
      at += 44
    }
  }
  const protocol = Buffer.alloc(4)
  protocol.writeUInt32LE(1)
  const file = Buffer.alloc(12)
  file.write("zkey", 0)
  file.writeUInt32LE(1, 4)
  file.writeUInt32LE(9, 8)
  writeFileSync(zkeyPath, Buffer.concat([
    file,
    ...section(1, protocol),
    ...section(2, header),
    ...section(3, merkle.get(3)!),
    ...section(4, coefs),
    ...section(5, tile(merkle.get(5)!, 64, nVars)),
    ...section(6, tile(merkle.get(6)!, 64, nVars)),
    ...section(7, tile(merkle.get(7)!, 128, nVars)),
    ...section(8, tile(merkle.get(8)!, 64, nVars - 2)),
    ...section(9, tile(merkle.get(9)!, 64, domain))
  ]))
  const values = Buffer.alloc(nVars * 32)
  values[0] = 1
  for (let i = 1; i < nVars; i++) randomBelowR().copy(values, i * 32)
  const wtnsHeader = Buffer.alloc(40)
  wtnsHeader.writeUInt32LE(32, 0)
  Buffer.from(R.toString(16).padStart(64, "0"), "hex").reverse().copy(wtnsHeader, 4)
  wtnsHeader.writeUInt32LE(nVars, 36)
  const wfile = Buffer.alloc(12)
  wfile.write("wtns", 0)
  wfile.writeUInt32LE(2, 4)
  wfile.writeUInt32LE(2, 8)
  writeFileSync(wtnsPath, Buffer.concat([wfile, ...section(1, wtnsHeader), ...section(2, values)]))
}
const zkeyBytes = statSync(zkeyPath).size
const digest = createHash("sha256").update(readFileSync(zkeyPath)).digest("hex")

// --- runs -----------------------------------------------------------------------------------
interface Out {
  readonly error?: string
  readonly loadMs: number
  readonly proveMs: ReadonlyArray<number>
  readonly proveCpuMs: ReadonlyArray<number>
  readonly info: { readonly tableBytes: number; readonly tableBytesMapped: number; readonly tableCache: string; readonly msm: Record<string, { c: number; copies: number }> }
  readonly peak: number
  readonly growth: number
}
const run = (options: Record<string, unknown>): Out => {
  const out = execFileSync("nice", ["-n", "10", process.execPath, CHILD, zkeyPath, digest, wtnsPath, JSON.stringify({ threads: THREADS, ...options }), String(PROOFS), String(THREADS)], {
    encoding: "utf8"
  })
  return JSON.parse(out.trim().split("\n").pop()!) as Out
}
const mb = (b: number) => (b / 1e6).toFixed(0)
const ms = (x: number) => (x < 1000 ? `${x.toFixed(0)} ms` : `${(x / 1000).toFixed(2)} s`)
const copies = (o: Out) => [...new Set(Object.values(o.info.msm).map((p) => p.copies))].join("/")
const row = (cells: ReadonlyArray<string | number>) => console.log(`| ${cells.join(" | ")} |`)

console.log(`synthetic key: 2^${LOG} domain, ${nVars} variables, zkey ${mb(zkeyBytes)} MB; ${THREADS} thread(s), ${PROOFS} proofs per process\n`)
const least = run({ memoryBudgetMB: 1, cache: false })
const leastMB = Number(/needs at least (\d+) MiB/.exec(least.error ?? "")?.[1])
const budgets: ReadonlyArray<[string, Record<string, unknown>]> = [
  ...(UNBOUNDED ? [["unbounded (tables ≤ 1 GiB)", { tableBudgetMB: 1024 }] as [string, Record<string, unknown>]] : []),
  ...FACTORS.map((f): [string, Record<string, unknown>] => {
    const b = Math.ceil(leastMB * f)
    return [`${b} MiB${f === 1 ? " (least)" : ""}`, { memoryBudgetMB: b }]
  })
]
row(["budget", "copies", "tables MB", "load", "warm proof (wall)", "warm proof (CPU, × first row)", "peak RSS MB", "growth MB"])
row(["---", "---", "---", "---", "---", "---", "---", "---"])
let unbounded = 0
for (const [name, options] of budgets) {
  const o = run(options)
  const warm = Math.min(...o.proveMs.slice(1))
  const warmCpu = Math.min(...o.proveCpuMs.slice(1))
  if (unbounded === 0) unbounded = warmCpu
  row([name, copies(o), mb(o.info.tableBytes), ms(o.loadMs), ms(warm), `${ms(warmCpu)} (${(warmCpu / unbounded).toFixed(2)}×)`, mb(o.peak), mb(o.growth)])
}

console.log("\ndisk cache (fresh processes, same budget):")
const cacheDir = join(dir, "tables")
rmSync(cacheDir, { recursive: true, force: true })
row(["budget", "process", "table cache", "load", "first proof", "warm proof", "first / warm", "load + first / warm"])
row(["---", "---", "---", "---", "---", "---", "---", "---"])
for (const f of CACHE_FACTORS) {
  const budget = Math.ceil(leastMB * f)
  for (const which of ["builds", "maps"]) {
    const o = run({ memoryBudgetMB: budget, tableCacheDir: cacheDir })
    const warm = Math.min(...o.proveMs.slice(1))
    if (which === "maps" && o.info.tableCache !== "mapped") throw new Error(`expected a mapped table, got ${o.info.tableCache}`)
    row([`${budget} MiB`, which, o.info.tableCache, ms(o.loadMs), ms(o.proveMs[0]!), ms(warm), (o.proveMs[0]! / warm).toFixed(2),
      ((o.loadMs + o.proveMs[0]!) / warm).toFixed(2)])
  }
}
