// Phase-2 benchmark (not a test): pnpm bench packages/proving/bench/phase2.ts --log 16 [--power 17] [--threads 2] [--snarkjs] [--compare]
//
// The native phase 2 (phase2NewZkey, then the in-place contribution of packages/proving/src/build/phase2.mjs) of
// a synthetic r1cs of 2^log − 64 constraints against a prepared ptau of `power` (default log + 1).
// A real ceremony ptau of power ≥ 16 takes snarkjs about an hour here, so the ptau is synthetic too:
// every section of snarkjs's prepared layout at its exact size, filled with a pool of valid curve
// points (k·G for random k) in place of the powers of τ. The phase 2's cost does not depend on which
// points they are, and with points on the curve snarkjs computes the same key from it as from a real
// one, so --compare (snarkjs's newZKey on the same files, byte comparison) checks the native code at
// sizes the tests do not reach, such as a domain of the ptau's whole power above 2^14.
// The r1cs mixes the coefficient shapes of circom output: half ±1, a quarter small constants, a
// quarter full-size field elements; two A terms, one or two B terms, one or two C terms per row.
// Files go to $MZK_BENCH_DIR (default the OS temp dir), outside the repository.
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, statSync, writeSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { loadNativeProver } from "@mzk/prover-native"
import * as snarkjs from "snarkjs"
import { contribute, pastEndPoint } from "../src/build/phase2.mjs"
import { le, R, u32, u64 } from "../test/fixtures/r1csFixture.js"

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}
const flag = (name: string) => process.argv.includes(`--${name}`)
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): a 2^8 r1cs on one thread.
const SMOKE = flag("smoke")
const log = Number(arg("log") ?? (SMOKE ? 8 : 12))
const power = Number(arg("power") ?? log + 1)
const threads = Number(arg("threads") ?? (SMOKE ? 1 : 2))
const dir = join(process.env["MZK_BENCH_DIR"] ?? tmpdir(), "mzk-phase2-bench")
mkdirSync(dir, { recursive: true })


/** Writes an iden3 file section by section, each body produced in chunks (the ptau is GBs at power 20). */
function writeBin(file: string, magic: string, sections: Array<[id: number, size: number, fill: (write: (b: Buffer) => void) => void]>) {
  const fd = openSync(file, "w")
  let pos = 0
  const write = (b: Buffer) => {
    writeSync(fd, b, 0, b.length, pos)
    pos += b.length
  }
  write(Buffer.concat([Buffer.from(magic), u32(1), u32(sections.length)]))
  for (const [id, size, fill] of sections) {
    write(Buffer.concat([u32(id), u64(size)]))
    const start = pos
    fill(write)
    if (pos - start !== size) throw new Error(`section ${id}: wrote ${pos - start} of ${size}`)
  }
  closeSync(fd)
}

async function makePtau(file: string) {
  const curve = await snarkjs.curves.getCurveFromName("bn128")
  const c = curve as unknown as {
    G1: { g: Uint8Array; timesScalar(p: Uint8Array, k: Uint8Array): Uint8Array; toAffine(p: Uint8Array): Uint8Array; toRprLEM(b: Uint8Array, o: number, p: Uint8Array): void }
    G2: { g: Uint8Array; timesScalar(p: Uint8Array, k: Uint8Array): Uint8Array; toAffine(p: Uint8Array): Uint8Array; toRprLEM(b: Uint8Array, o: number, p: Uint8Array): void }
  }
  const pool = (G: typeof c.G1, n: number, size: number) =>
    Array.from({ length: n }, () => {
      const out = Buffer.alloc(size)
      G.toRprLEM(out, 0, G.toAffine(G.timesScalar(G.g, randomBytes(31))))
      return out
    })
  const p1 = pool(c.G1, 1021, 64)
  const p2 = pool(c.G2, 127, 128)
  const g2 = Buffer.alloc(128)
  c.G2.toRprLEM(g2, 0, c.G2.toAffine(c.G2.g))
  const g1 = Buffer.alloc(64)
  c.G1.toRprLEM(g1, 0, c.G1.toAffine(c.G1.g))
  // Point 0 of the τ sections is the generator, as in every ptau (τ^0); the rest from the pools.
  const points = (pool: Buffer[], count: number, first?: Buffer) => (write: (b: Buffer) => void) => {
    const chunk = 1 << 14
    for (let i = 0; i < count; i += chunk) {
      const n = Math.min(chunk, count - i)
      write(Buffer.concat(Array.from({ length: n }, (_, j) => (i + j === 0 && first ? first : pool[((i + j) * 7919) % pool.length]!))))
    }
  }
  const nTau = 2 ** (power + 1) - 1
  const q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
  writeBin(file, "ptau", [
    [1, 4 + 32 + 8, (w) => w(Buffer.concat([u32(32), le(q, 32), u32(power), u32(power)]))],
    [2, nTau * 64, points(p1, nTau, g1)],
    [3, 2 ** power * 128, points(p2, 2 ** power, g2)],
    [4, 2 ** power * 64, points(p1, 2 ** power)],
    [5, 2 ** power * 64, points(p1, 2 ** power)],
    [6, 128, points(p2, 1)],
    [7, 68, (w) => w(Buffer.alloc(68))],
    [12, (2 ** (power + 2) - 1) * 64, points(p1, 2 ** (power + 2) - 1)],
    [13, nTau * 128, points(p2, nTau)],
    [14, nTau * 64, points(p1, nTau)],
    [15, nTau * 64, points(p1, nTau)]
  ])
}

function makeR1cs(file: string, nConstraints: number, nVars: number, nPublic: number) {
  const coefficient = () => {
    const pick = Math.random()
    if (pick < 0.25) return 1n
    if (pick < 0.5) return R - 1n
    if (pick < 0.75) return BigInt(2 + Math.floor(Math.random() * 1000))
    return BigInt("0x" + randomBytes(31).toString("hex")) % R
  }
  const term = (s: number) => Buffer.concat([u32(s), le(coefficient(), 32)])
  const signal = () => Math.floor(Math.random() * nVars)
  const rows: Buffer[] = []
  for (let c = 0; c < nConstraints; c++) {
    const lc = (n: number) => Buffer.concat([u32(n), ...Array.from({ length: n }, () => term(signal()))])
    rows.push(Buffer.concat([lc(2), lc(1 + (c % 2)), lc(1 + ((c >> 1) % 2))]))
  }
  const body = Buffer.concat(rows)
  const header = Buffer.concat([u32(32), le(R, 32), u32(nVars), u32(nPublic), u32(0), u32(nVars - 1 - nPublic), u64(nVars), u32(nConstraints)])
  writeBin(file, "r1cs", [
    [1, header.length, (w) => w(header)],
    [2, body.length, (w) => w(body)]
  ])
}

const native = loadNativeProver()
if (!native.ok) throw new Error(`native addon unavailable: ${native.reason}`)
const ptau = join(dir, `synthetic_pot${power}.ptau`)
if (!existsSync(ptau)) {
  const t = performance.now()
  await makePtau(ptau)
  console.log(`synthetic ptau, power ${power}: ${(statSync(ptau).size / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t) / 1000).toFixed(1)} s`)
}
const nConstraints = 2 ** log - 64
const r1cs = join(dir, `synthetic_${log}.r1cs`)
if (!existsSync(r1cs)) makeR1cs(r1cs, nConstraints, Math.floor(nConstraints * 1.1), 2)
const zkey = join(dir, `synthetic_${log}_p${power}.zkey`)
/** Wall and CPU (user + system, every thread of the process) of one step, in seconds. */
async function timed<T>(step: () => T | Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const value = await step()
  const c = process.cpuUsage(c0)
  return { value, wall: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 }
}
const past = await timed(() => pastEndPoint(r1cs, ptau))
const created = await timed(() =>
  native.addon.phase2NewZkey(r1cs, ptau, zkey, past.value === undefined ? { threads } : { threads, pastEnd: past.value })
)
const contributed = await timed(() => contribute(native.addon, zkey, { threads }))
const s1 = (x: { wall: number; cpu: number }) => `${x.wall.toFixed(1)} s wall (${x.cpu.toFixed(1)} s CPU)`
console.log(
  `native phase 2, 2^${log} domain (${nConstraints} constraints), ptau power ${power}, ${threads} threads, load ${loadavg()[0]!.toFixed(1)}: ` +
    `newZKey ${s1(created)}${past.value === undefined ? "" : ` + point past the τ section ${s1(past)}`}, contribution ${s1(contributed)}; ` +
    `zkey ${(created.value.bytes / 2 ** 20).toFixed(0)} MiB`
)
if (flag("compare") || flag("snarkjs")) {
  const mine = join(dir, "native_new.zkey")
  const theirs = join(dir, "snarkjs_new.zkey")
  const pastEnd = await pastEndPoint(r1cs, ptau)
  const tn = performance.now()
  native.addon.phase2NewZkey(r1cs, ptau, mine, pastEnd === undefined ? { threads } : { threads, pastEnd })
  const nativeMs = performance.now() - tn
  const ts = performance.now()
  await snarkjs.zKey.newZKey(r1cs, ptau, theirs)
  const snarkjsMs = performance.now() - ts
  const same = Buffer.compare(readFileSync(mine), readFileSync(theirs)) === 0
  console.log(
    `newZKey alone: native ${(nativeMs / 1000).toFixed(1)} s, snarkjs ${(snarkjsMs / 1000).toFixed(1)} s` +
      `${pastEnd === undefined ? "" : " (domain = the ptau's power: the point past the τ section from snarkjs's WebAssembly)"}; byte-identical: ${same}`
  )
  rmSync(mine, { force: true })
  rmSync(theirs, { force: true })
  if (!same) process.exitCode = 1
}
rmSync(zkey, { force: true })
process.exit()
