// Point-check benchmark (not a test): pnpm bench packages/proving/bench/zkeyPoints.ts [--sizes 14,16,18] [--js-up-to 14]
//
// What checking every point of an uploaded zkey costs (G1 on the curve, G2 on the twist and in G2):
//   1. The built-in keys: the native check on 1 and 2 threads and its JavaScript twin (used where
//      the addon is not built), wall and CPU ms.
//   2. Keys of 2^k variables and a domain of 2^k (3·2^k + 2^k G1 points and 2^k G2 points, as a
//      circuit of about 2^k constraints has), made of a few valid points repeated: the check's cost
//      does not depend on which points they are. Native on 1 and 2 threads; the JS twin up to
//      --js-up-to (it is slow). Reports ms and µs per G2 point (they are most of the cost).
import { loadNativeProver } from "@mzk/prover-native"
import { readFileSync } from "node:fs"
import { G1, G2 } from "../../prover-native/test/reference.js"
import { zkeyG1, zkeyG2, zkeyOf } from "../../prover-native/test/zkeyFixture.js"
import { buildFilesOf } from "../src/catalog.js"
import { checkZkeyPointsJs } from "../src/build/zkeyPoints.mjs"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name)
  return at > 0 ? process.argv[at + 1]! : fallback
}
// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): the built-in keys and one 2^8 key.
const SMOKE = process.argv.includes("--smoke")
const SIZES = arg("--sizes", SMOKE ? "8" : "14,16,18").split(",").map(Number)
const JS_UP_TO = Number(arg("--js-up-to", SMOKE ? "8" : "14"))

const native = loadNativeProver()
if (!native.ok) console.warn(`native prover unavailable (${native.reason}): only the JavaScript check is measured`)
const addon = native.ok ? native.addon : undefined

const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const measure = async (run: () => unknown) => {
  const c = cpuMs()
  const t = performance.now()
  const counted = (await run()) as { g1: number; g2: number }
  return { wallMs: performance.now() - t, cpuMs: cpuMs() - c, ...counted }
}
const row = (cells: ReadonlyArray<string | number>) => console.log(`| ${cells.join(" | ")} |`)
const ms = (x: number) => (x < 10 ? x.toFixed(2) : x < 1000 ? x.toFixed(0) : `${(x / 1000).toFixed(2)} s`)

const engines = async (zkey: Uint8Array, js: boolean) => {
  const out: Array<[string, Awaited<ReturnType<typeof measure>>]> = []
  if (addon !== undefined) {
    for (const threads of [1, 2]) out.push([`native, ${threads} thread${threads > 1 ? "s" : ""}`, await measure(() => addon.checkZkeyPoints(zkey, { threads }))])
  }
  if (js) out.push(["JavaScript", await measure(() => checkZkeyPointsJs(zkey))])
  return out
}

console.log("\n1. The built-in keys")
row(["circuit", "G1 points", "G2 points", "engine", "wall", "CPU"])
row(["---", "---", "---", "---", "---", "---"])
await checkZkeyPointsJs(new Uint8Array(readFileSync(buildFilesOf("multiplier").zkey)))
for (const name of ["multiplier", "range", "hash_preimage", "merkle_membership"]) {
  const zkey = new Uint8Array(readFileSync(buildFilesOf(name).zkey))
  for (const [engine, m] of await engines(zkey, true)) row([name, m.g1, m.g2, engine, ms(m.wallMs), ms(m.cpuMs)])
}

/** A key of 2^k variables and domain 2^k, its sections filled with copies of a few valid points. */
const syntheticKey = (k: number) => {
  const n = 2 ** k
  const small = zkeyOf({
    alpha1: G1.generator, beta1: G1.generator, beta2: G2.generator, gamma2: G2.generator, delta1: G1.generator, delta2: G2.generator,
    ic: [G1.generator, G1.generator], a: Array(n).fill(null), b1: Array(n).fill(null), b2: Array(n).fill(null), c: Array(n - 2).fill(null),
    h: Array(n).fill(null)
  })
  // Replace the points at infinity (zeros) of sections 5 to 9 by copies of real points.
  const g1 = [3n, 5n, 7n, 11n].map((s) => zkeyG1(G1.mul(G1.generator, s)))
  const g2 = [3n, 5n, 7n, 11n].map((s) => zkeyG2(G2.mul(G2.generator, s)))
  const view = new DataView(small.buffer)
  let pos = 12
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const type = view.getUint32(pos, true)
    const size = Number(view.getBigUint64(pos + 4, true))
    if (type >= 5 && type <= 9) {
      const points = type === 7 ? g2 : g1
      const width = points[0]!.length
      for (let o = 0, j = 0; o < size; o += width, j++) small.set(points[j % points.length]!, pos + 12 + o)
    }
    pos += 12 + size
  }
  return small
}

console.log("\n2. Keys of 2^k variables, domain 2^k")
row(["k", "G1 points", "G2 points", "engine", "wall", "CPU", "CPU µs per G2 point"])
row(["---", "---", "---", "---", "---", "---", "---"])
for (const k of SIZES) {
  const zkey = syntheticKey(k)
  for (const [engine, m] of await engines(zkey, k <= JS_UP_TO)) {
    row([k, m.g1, m.g2, engine, ms(m.wallMs), ms(m.cpuMs), ((1000 * m.cpuMs) / m.g2).toFixed(1)])
  }
}
await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
