// A development powers of tau for the proof-system benchmark, from a τ, α and β drawn here and
// then dropped: real powers of one τ (so PLONK, FFLONK and Groth16 keys made from it prove and
// verify), never a ceremony. snarkjs's own path (powersoftau new + contribute + prepare phase2)
// computes every section at every power, which takes hours at the powers FFLONK needs on this
// machine; this writes only what the benchmark's setups read, in snarkjs's prepared layout:
//
// - section 2 (τ^i·G1): `tauPoints` points (FFLONK reads 9·n + 18 of them, PLONK n + 6);
// - section 3 (τ^i·G2): G2 and τ·G2, the only ones PLONK/FFLONK read; Groth16's phase 2 reads none;
// - sections 4–6: α·G1, β·G1, β·G2 (Groth16's phase 2 reads the first point of each);
// - sections 12–15, the Lagrange bases: correct at the `lagrange` powers asked for, the
//   generator everywhere else (placeholders, so offsets are snarkjs's).
//
// With `full` every section has the size of a power-`power` ptau (what the native phase 2
// checks); otherwise sections 2 and 12 only (what snarkjs's PLONK and FFLONK setups read).
// Points are in the files' form: affine, Montgomery, little-endian (ffjavascript's buffers).
import { closeSync, openSync, renameSync, writeSync } from "node:fs"
import * as snarkjs from "snarkjs"

interface Group {
  readonly g: Uint8Array
  readonly F: { readonly n8: number }
  toAffine(p: Uint8Array): Uint8Array
  toRprLEM(b: Uint8Array, o: number, p: Uint8Array): void
  timesFr(p: Uint8Array, k: Uint8Array): Uint8Array
  batchApplyKey(buff: Uint8Array, first: Uint8Array, inc: Uint8Array, inType?: string, outType?: string): Promise<Uint8Array>
  lagrangeEvaluations(buff: Uint8Array, inType: string, outType: string): Promise<Uint8Array>
}
interface Curve {
  readonly G1: Group
  readonly G2: Group
  readonly Fr: { readonly one: Uint8Array; random(): Uint8Array; mul(a: Uint8Array, b: Uint8Array): Uint8Array }
  readonly q: bigint
}

export const bn128 = async (): Promise<Curve> => (await snarkjs.curves.getCurveFromName("bn128")) as unknown as Curve

export interface DevelopmentPtauOptions {
  readonly power: number
  /** Points of section 2 (τ^0 … τ^(tauPoints−1) in G1); a power-p ptau has 2^(p+1) − 1. */
  readonly tauPoints: number
  /** Powers whose Lagrange bases of section 12 are computed (the rest are placeholders). */
  readonly lagrange: ReadonlyArray<number>
  /**
   * Every section at its full power-`power` size, for the native phase 2, with sections 13–15's
   * Lagrange bases computed at this power (the circuit's domain).
   */
  readonly full?: { readonly lagrange: number }
}

const le = (v: bigint, bytes: number) => {
  const b = Buffer.alloc(bytes)
  for (let i = 0; i < bytes; i++) b[i] = Number((v >> BigInt(8 * i)) & 0xffn)
  return b
}
const u32 = (v: number) => le(BigInt(v), 4)

const affine = (G: Group, p: Uint8Array) => {
  const out = Buffer.alloc(G.F.n8 * 2)
  G.toRprLEM(out, 0, G.toAffine(p))
  return out
}

// Plain Uint8Arrays, not Buffers: ffjavascript's FFTs slice their input expecting copies, and a
// Buffer's slice is a view (the Lagrange bases came out wrong from a Buffer).
/** `n` copies of one affine point, in one buffer. */
const repeat = (point: Uint8Array, n: number) => {
  const out = new Uint8Array(point.length * n)
  for (let i = 0; i < n; i++) out.set(point, i * point.length)
  return out
}

/** Writes the ptau at `file` (through a temporary file); returns the seconds it took. */
export const writeDevelopmentPtau = async (file: string, options: DevelopmentPtauOptions): Promise<number> => {
  const started = performance.now()
  const curve = await bn128()
  const { G1, G2, Fr } = curve
  const tau = Fr.random()
  const alpha = Fr.random()
  const beta = Fr.random()
  const g1 = affine(G1, G1.g)
  const g2 = affine(G2, G2.g)
  const { power, full } = options
  const fullTau = 2 ** (power + 1) - 1
  const nTau = full ? fullTau : options.tauPoints
  if (full && options.tauPoints > fullTau) throw new Error(`a power-${power} ptau has ${fullTau} τ points, not ${options.tauPoints}`)
  // τ^i·G1 for every i: the generator repeated, each copy scaled by 1·τ^i (snarkjs's contribute does the same).
  const tauG1 = await G1.batchApplyKey(repeat(g1, nTau), Fr.one, tau)

  const tmp = `${file}.tmp`
  const fd = openSync(tmp, "w")
  let pos = 0
  const write = (b: Uint8Array) => {
    for (let at = 0; at < b.length; ) at += writeSync(fd, b, at, Math.min(b.length - at, 1 << 30), pos + at)
    pos += b.length
  }
  const sections: Array<[id: number, body: () => Promise<ReadonlyArray<Uint8Array>>]> = [
    [1, async () => [u32(32), le(curve.q, 32), u32(power), u32(power)]],
    [2, async () => [tauG1]],
    [3, async () => [g2, affine(G2, G2.timesFr(G2.g, tau))]],
    [4, async () => [affine(G1, G1.timesFr(G1.g, alpha))]],
    [5, async () => [affine(G1, G1.timesFr(G1.g, beta))]],
    [6, async () => [affine(G2, G2.timesFr(G2.g, beta))]],
    [7, async () => [Buffer.alloc(68)]],
    // A full ptau has section 12 up to power + 1 (its last basis one point short: infinity).
    [12, () => lagrangeSection(G1, g1, full ? power + 1 : Math.max(...options.lagrange), (n) => tauG1.subarray(0, Math.min(n, nTau) * 64), options.lagrange)],
  ]
  if (full) {
    // Groth16's phase 2 reads τ^i·G2, α·τ^i·G1 and β·τ^i·G1 in the Lagrange basis at the circuit's power.
    const n = 2 ** full.lagrange
    const tauG2 = await G2.batchApplyKey(repeat(g2, n), Fr.one, tau)
    const alphaTau = await G1.batchApplyKey(repeat(g1, n), alpha, tau)
    const betaTau = await G1.batchApplyKey(repeat(g1, n), beta, tau)
    sections.push(
      [13, () => lagrangeSection(G2, g2, power, () => tauG2, [full.lagrange])],
      [14, () => lagrangeSection(G1, g1, power, () => alphaTau, [full.lagrange])],
      [15, () => lagrangeSection(G1, g1, power, () => betaTau, [full.lagrange])],
    )
  }
  write(Buffer.concat([Buffer.from("ptau"), u32(1), u32(sections.length)]))
  for (const [id, body] of sections) {
    const parts = await body()
    const size = parts.reduce((s, p) => s + p.length, 0)
    write(Buffer.concat([u32(id), le(BigInt(size), 8)]))
    for (const p of parts) write(p)
  }
  closeSync(fd)
  renameSync(tmp, file)
  return (performance.now() - started) / 1000
}

/**
 * A Lagrange section: for each power k in 0..last, 2^k points, the basis of the domain 2^k at τ
 * where k is asked for (the inverse FFT of τ^0..τ^(2^k−1), as snarkjs's prepare phase 2 computes
 * it; the power past the τ section's end takes the point at infinity for its last, as there), the
 * generator elsewhere.
 */
const lagrangeSection = async (
  G: Group,
  generator: Uint8Array,
  last: number,
  powers: (n: number) => Uint8Array,
  wanted: ReadonlyArray<number>,
): Promise<ReadonlyArray<Uint8Array>> => {
  const parts: Array<Uint8Array> = []
  for (let k = 0; k <= last; k++) {
    const n = 2 ** k
    if (!wanted.includes(k)) {
      parts.push(repeat(generator, n))
      continue
    }
    const points = new Uint8Array(n * generator.length)
    points.set(powers(n))
    parts.push(await G.lagrangeEvaluations(points, "affine", "affine"))
  }
  return parts
}
