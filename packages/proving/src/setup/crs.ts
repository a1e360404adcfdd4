// The BN254 CRS UltraHonk commits with, read only from local files: bb.js downloads Aztec's
// "ignition" points whenever the files it is pointed at are missing or short, and a build or a
// proof must never reach the network. So mzk reads the files itself and hands bb.js the points
// (Barretenberg.srsInitSrs), never a path it could fill by downloading.
//
// Layout (bb.js's own, `~/.bb-crs`): a directory with
//   bn254_g1.dat  n points [1]₁, [τ]₁, [τ²]₁, …, 64 bytes each: x then y, 32-byte big-endian
//   bn254_g2.dat  [τ]₂, 128 bytes: x.c0, x.c1, y.c0, y.c1, each 32-byte big-endian
// An operator points mzk at a copy of Aztec's ignition files (trusted setup by 176 participants),
// or derives one from the powers of tau it already trusts for Groth16 (writeCrsFromPtau: a ptau's
// tauG1 and tauG2 sections are the same monomial points), or makes a development one with
// writeDevelopmentCrs (a τ anybody here could have kept: never for production).
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { fileReader, only, readPtauHeader, readSections } from "../formats/iden3.mjs"
import { snarkjsDependency } from "../snarkjsDeps.mjs"

/** Where the CRS files are: the directory holding bn254_g1.dat and bn254_g2.dat. */
export interface NoirCrs {
  readonly path: string
}

export class CrsError extends Error {
  override readonly name = "CrsError"
}

const G1_FILE = "bn254_g1.dat"
const G2_FILE = "bn254_g2.dat"

/** How many G1 points the CRS at `crs.path` holds; a CrsError when the files are missing or malformed. */
export const crsPoints = (crs: NoirCrs): number => {
  let g1: number
  let g2: number
  try {
    g1 = statSync(join(crs.path, G1_FILE)).size
    g2 = statSync(join(crs.path, G2_FILE)).size
  } catch {
    throw new CrsError(`no UltraHonk CRS at ${crs.path}: it needs ${G1_FILE} and ${G2_FILE} (see docs/proving-systems-noir.md)`)
  }
  if (g1 === 0 || g1 % 64 !== 0) throw new CrsError(`${join(crs.path, G1_FILE)} must hold whole 64-byte points`)
  if (g2 !== 128) throw new CrsError(`${join(crs.path, G2_FILE)} must be one 128-byte G2 point`)
  return g1 / 64
}

/** The first `points` G1 points and the G2 point; a CrsError naming the shortfall when the file is too small. */
export const readCrs = (crs: NoirCrs, points: number): { g1: Uint8Array; g2: Uint8Array } => {
  const have = crsPoints(crs)
  if (have < points) {
    throw new CrsError(`the UltraHonk CRS at ${crs.path} has ${have} points; this circuit needs ${points}`)
  }
  const g1 = new Uint8Array(points * 64)
  const fd = openSync(join(crs.path, G1_FILE), "r")
  try {
    readSync(fd, g1, 0, g1.length, 0)
  } finally {
    closeSync(fd)
  }
  return { g1, g2: new Uint8Array(readFileSync(join(crs.path, G2_FILE))) }
}

interface FfCurve {
  readonly Fr: { e(x: bigint): unknown }
  readonly G2: {
    readonly g: unknown
    fromRprLEM(buff: Uint8Array, o: number): unknown
    timesFr(p: unknown, s: unknown): unknown
    toAffine(p: unknown): unknown
    toRprUncompressed(buff: Uint8Array, o: number, p: unknown): void
  }
  readonly G1: {
    readonly F: { readonly n8: number }
    readonly g: unknown
    toAffine(p: unknown): unknown
    toRprLEM(buff: Uint8Array, o: number, p: unknown): void
    batchApplyKey(buff: Uint8Array, first: unknown, inc: unknown, inType?: string, outType?: string): Promise<Uint8Array>
    batchLEMtoU(buff: Uint8Array): Promise<Uint8Array>
  }
  terminate(): Promise<void>
}

/**
 * Writes a development CRS of `points` G1 points to `dir` from a fresh random τ, forgotten when
 * this returns. Development only: whoever ran this machine could have kept τ and forge proofs.
 * ffjavascript (snarkjs's curve library) computes [τ^i]₁ in batches on its worker threads.
 */
export const writeDevelopmentCrs = async (dir: string, points: number): Promise<NoirCrs> => {
  const ff = (await snarkjsDependency("ffjavascript")) as { getCurveFromName(name: string): Promise<FfCurve> }
  const curve = await ff.getCurveFromName("bn128")
  try {
    // r is 254 bits: 31 random bytes stay below it.
    const tau = curve.Fr.e(BigInt("0x" + randomBytes(31).toString("hex")) + 1n)
    const size = curve.G1.F.n8 * 2
    const generators = new Uint8Array(points * size)
    const g = new Uint8Array(size)
    curve.G1.toRprLEM(g, 0, curve.G1.toAffine(curve.G1.g))
    for (let i = 0; i < points; i++) generators.set(g, i * size)
    // batchApplyKey multiplies point i by first·inc^i: here τ^i·G.
    const powers = await curve.G1.batchApplyKey(generators, curve.Fr.e(1n), tau, "affine", "affine")
    const g1 = await curve.G1.batchLEMtoU(powers)
    return writeCrs(dir, g1, barretenbergG2(curve, curve.G2.timesFr(curve.G2.g, tau)))
  } finally {
    await curve.terminate()
  }
}

// ffjavascript writes G2 as x.c1, x.c0, y.c1, y.c0 (Ethereum's order); Barretenberg reads c0 first.
const barretenbergG2 = (curve: FfCurve, point: unknown): Uint8Array => {
  const eth = new Uint8Array(128)
  curve.G2.toRprUncompressed(eth, 0, curve.G2.toAffine(point))
  const g2 = new Uint8Array(128)
  g2.set(eth.subarray(32, 64), 0)
  g2.set(eth.subarray(0, 32), 32)
  g2.set(eth.subarray(96, 128), 64)
  g2.set(eth.subarray(64, 96), 96)
  return g2
}

const writeCrs = (dir: string, g1: Uint8Array, g2: Uint8Array): NoirCrs => {
  mkdirSync(dir, { recursive: true })
  // Written aside and renamed, G1 last (crsPoints reads its size), so a reader never sees a half-written CRS.
  writeFileSync(join(dir, `${G1_FILE}.tmp`), g1)
  writeFileSync(join(dir, `${G2_FILE}.tmp`), g2)
  renameSync(join(dir, `${G2_FILE}.tmp`), join(dir, G2_FILE))
  renameSync(join(dir, `${G1_FILE}.tmp`), join(dir, G1_FILE))
  return { path: dir }
}

/**
 * Writes a CRS of `points` G1 points (all the ptau has when omitted) to `dir` from a snarkjs
 * powers-of-tau file: its tauG1 section (2) holds [τ^i]₁ for i < 2^(power+1) − 1 and its tauG2
 * section (3) [τ^i]₂, both affine in ffjavascript's little-endian Montgomery form. The CRS is as
 * trustworthy as the ceremony behind the ptau (Hermez's, for the public files).
 */
export const writeCrsFromPtau = async (ptauPath: string, dir: string, points?: number): Promise<NoirCrs> => {
  const header = readPtauHeader(ptauPath)
  if (!header.bn128) throw new CrsError(`${ptauPath} is a ${header.curve} ptau; UltraHonk needs bn128`)
  const available = 2 ** (header.power + 1) - 1
  const n = points ?? available
  if (n > available) throw new CrsError(`${ptauPath} (power ${header.power}) has ${available} G1 points; ${n} were asked for`)
  const fd = openSync(ptauPath, "r")
  let g1Lem: Uint8Array
  let g2Lem: Uint8Array
  try {
    const reader = fileReader(fd)
    const { sections } = readSections(reader, "ptau")
    g1Lem = reader.read(only(sections, 2, "ptau").start, n * 64)
    // [τ]₂ is the second point of tauG2 (the first is the generator).
    g2Lem = reader.read(only(sections, 3, "ptau").start + 128, 128)
  } finally {
    closeSync(fd)
  }
  const ff = (await snarkjsDependency("ffjavascript")) as { getCurveFromName(name: string): Promise<FfCurve> }
  const curve = await ff.getCurveFromName("bn128")
  try {
    return writeCrs(dir, await curve.G1.batchLEMtoU(g1Lem), barretenbergG2(curve, curve.G2.fromRprLEM(g2Lem, 0)))
  } finally {
    await curve.terminate()
  }
}

/** The CRS's [τ]₂ as the four 32-byte words Solidity's pairing precompile takes (x.c1, x.c0, y.c1, y.c0), hex. */
export const crsG2Words = (g2: Uint8Array): ReadonlyArray<string> => {
  const word = (from: number) => "0x" + Buffer.from(g2.subarray(from, from + 32)).toString("hex")
  return [word(32), word(0), word(96), word(64)]
}
