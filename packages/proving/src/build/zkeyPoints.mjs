// Every point a Groth16 prover or verifier reads from an uploaded zkey, checked before the key is
// accepted: canonical coordinates, G1 on the curve, G2 on the twist and in its r-order subgroup.
// The native addon's `checkZkeyPoints` does it on every core where it is built; this file is the
// same check on ffjavascript's WebAssembly curve (the one snarkjs uses) where it is not, with the
// same subgroup test and the same messages. packages/prover-native/native/zkey_points.hpp explains
// the test ([x₀+1]P + ψ([x₀]P) + ψ²([x₀]P) = ψ³([2x₀]P), ePrint 2022/348) and why it was chosen.
// @ts-check

import * as snarkjs from "snarkjs";
import { BN128_Q, BN128_R, FormatError, bytesReader, only, readSections } from "../formats/iden3.mjs";

/**
 * What the checks use of ffjavascript's bn128 (snarkjs's curve; it ships no types): points and
 * field elements are its Montgomery byte arrays.
 * @typedef {{
 *   readonly G1: { isValid(p: Uint8Array): boolean }
 *   readonly G2: {
 *     isValid(p: Uint8Array): boolean
 *     isZero(p: Uint8Array): boolean
 *     timesScalar(p: Uint8Array, scalar: Uint8Array): Uint8Array
 *     add(a: Uint8Array, b: Uint8Array): Uint8Array
 *     double(p: Uint8Array): Uint8Array
 *     eq(a: Uint8Array, b: Uint8Array): boolean
 *   }
 *   readonly F1: { neg(a: Uint8Array): Uint8Array }
 *   readonly F2: { fromObject(a: ReadonlyArray<bigint>): Uint8Array; exp(a: Uint8Array, e: bigint): Uint8Array; mul(a: Uint8Array, b: Uint8Array): Uint8Array }
 * }} CurveChecks
 */

/**
 * A point check's answer: undefined, or what is wrong with the point.
 * @typedef {(point: Uint8Array) => string | undefined} PointCheck
 */

/** BN254's seed x₀ (t = 6x₀² + 1). */
const BN_SEED = 4965661367192848881n;

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 * @param {number} length
 */
const le = (bytes, offset, length) => {
  let v = 0n;
  for (let i = length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[offset + i] ?? 0);
  return v;
};

/**
 * The native check where the addon is loaded (`threads` of it), else this file's; both resolve to
 * `{ g1, g2 }`, the points checked, or throw a FormatError naming the first bad point.
 * @param {Uint8Array} bytes
 * @param {{ readonly addon?: import("@mzk/prover-native").NativeProverAddon | undefined; readonly threads?: number }} [options]
 * @returns {Promise<import("@mzk/prover-native").PointCount>}
 */
export async function checkZkeyPoints(bytes, { addon, threads = 1 } = {}) {
  if (addon === undefined) return checkZkeyPointsJs(bytes);
  try {
    return addon.checkZkeyPoints(bytes, { threads });
  } catch (e) {
    throw e instanceof Error && "code" in e && e.code === "MZK_INVALID_INPUT" ? new FormatError(e.message) : e;
  }
}

/**
 * The check on ffjavascript's bn128 curve (snarkjs's, unless one is given).
 * @param {Uint8Array} bytes
 * @param {unknown} [curve]
 * @returns {Promise<import("@mzk/prover-native").PointCount>}
 */
export async function checkZkeyPointsJs(bytes, curve) {
  const curve0 = /** @type {CurveChecks} */ (curve ?? (await snarkjs.curves.getCurveFromName("bn128")));
  const reader = bytesReader(bytes);
  const { sections } = readSections(reader, "zkey");
  const s1 = only(sections, 1, "zkey");
  if (s1.size !== 4 || le(bytes, s1.start, 4) !== 1n) throw new FormatError("zkey: not a Groth16 key");
  const s2 = only(sections, 2, "zkey");
  const header = reader.read(s2.start, s2.size);
  if (s2.size !== 72 + 12 + 3 * 64 + 3 * 128 || le(header, 0, 4) !== 32n || le(header, 4, 32) !== BN128_Q || le(header, 36, 4) !== 32n ||
    le(header, 40, 32) !== BN128_R) {
    throw new FormatError("zkey: not a bn128 Groth16 key (its header names other fields)");
  }
  const nVars = Number(le(header, 72, 4));
  const nPublic = Number(le(header, 76, 4));
  const domainSize = Number(le(header, 80, 4));
  if (nPublic + 1 > nVars) throw new FormatError("zkey: inconsistent header (more public signals than variables)");

  const { g1Problem, g2Problem } = pointChecks(curve0);

  let g1 = 0;
  let g2 = 0;
  /** @type {ReadonlyArray<readonly [string, number, boolean]>} */
  const headerPoints = [["alpha1", 0, false], ["beta1", 64, false], ["beta2", 128, true], ["gamma2", 256, true], ["delta1", 384, false], ["delta2", 448, true]];
  for (const [name, offset, isG2] of headerPoints) {
    const p = header.slice(84 + offset, 84 + offset + (isG2 ? 128 : 64));
    let problem = isG2 ? g2Problem(p) : g1Problem(p);
    if (problem === undefined && p.every((/** @type {number} */ b) => b === 0)) problem = "is the point at infinity";
    if (problem !== undefined) throw new FormatError(`zkey: ${name} (section 2, the header) ${problem}`);
    if (isG2) g2++;
    else g1++;
  }
  /** @type {ReadonlyArray<readonly [number, number, boolean, string]>} */
  const pointSections = [[3, nPublic + 1, false, "IC"], [5, nVars, false, "A points"], [6, nVars, false, "B1 points"], [7, nVars, true, "B2 points"],
    [8, nVars - nPublic - 1, false, "C points"], [9, domainSize, false, "H points"]];
  for (const [type, count, isG2, name] of pointSections) {
    const size = isG2 ? 128 : 64;
    const s = only(sections, type, "zkey");
    if (s.size !== count * size) throw new FormatError(`zkey: section ${type} (${name}) has ${s.size} bytes, expected ${count * size}`);
    for (let i = 0; i < count; i++) {
      const p = reader.read(s.start + i * size, size).slice();
      const problem = isG2 ? g2Problem(p) : g1Problem(p);
      if (problem !== undefined) throw new FormatError(`zkey: point ${i} of section ${type} (${name}) ${problem}`);
    }
    if (isG2) g2 += count;
    else g1 += count;
  }
  return { g1, g2 };
}

/**
 * The checks of one point of BN254 in ffjavascript's form (Montgomery coordinates, affine or
 * Jacobian), each answering undefined or the problem in words: G1 canonical and on the curve
 * (its cofactor is 1), G2 canonical, on the twist and in the r-order subgroup. Shared by uploaded
 * zkeys and the keys and proofs `POST /verifications` takes (src/verify/); `subject` names what
 * holds the point in the messages.
 * @param {unknown} curve ffjavascript's bn128
 * @param {string} [subject]
 * @returns {{ readonly g1Problem: PointCheck; readonly g2Problem: PointCheck }}
 */
export function pointChecks(curve, subject = "key") {
  const { G1, G2, F1, F2 } = /** @type {CurveChecks} */ (curve);
  // ψ(X : Y : Z) = (X̄·cx : Ȳ·cy : Z̄) on Jacobian coordinates, with cx = ξ^((q−1)/3), cy = ξ^((q−1)/2), ξ = 9 + u.
  const xi = F2.fromObject([9n, 1n]);
  const cx = F2.exp(xi, (BN128_Q - 1n) / 3n);
  const cy = F2.exp(xi, (BN128_Q - 1n) / 2n);
  /** @param {Uint8Array} a */
  const conj = (a) => {
    const out = new Uint8Array(64);
    out.set(a.subarray(0, 32));
    out.set(F1.neg(a.subarray(32, 64)), 32);
    return out;
  };
  /** @param {Uint8Array} p */
  const psi = (p) => {
    const out = new Uint8Array(192);
    out.set(F2.mul(conj(p.subarray(0, 64)), cx));
    out.set(F2.mul(conj(p.subarray(64, 128)), cy), 64);
    out.set(conj(p.subarray(128, 192)), 128);
    return out;
  };
  const seed = new Uint8Array(8);
  new DataView(seed.buffer).setBigUint64(0, BN_SEED, true);
  /** @param {Uint8Array} p */
  const inG2 = (p) => {
    if (G2.isZero(p)) return true;
    const xp = G2.timesScalar(p, seed);
    const lhs = G2.add(G2.add(G2.add(xp, p), psi(xp)), psi(psi(xp)));
    return G2.eq(lhs, psi(psi(psi(G2.double(xp)))));
  };

  // Coordinates are stored in Montgomery form, as ffjavascript holds them: each must be below q.
  /**
   * @param {Uint8Array} p
   * @param {number} coordinates
   */
  const canonical = (p, coordinates) => {
    for (let c = 0; c < coordinates; c++) if (le(p, 32 * c, 32) >= BN128_Q) return false;
    return true;
  };
  const NOT_ON_CURVE = `is not on the curve or not canonical (corrupt ${subject})`;
  /** @type {PointCheck} */
  const g1Problem = (p) => (canonical(p, 2) && G1.isValid(p) ? undefined : NOT_ON_CURVE);
  /** @type {PointCheck} */
  const g2Problem = (p) => {
    if (!canonical(p, 4) || !G2.isValid(p)) return NOT_ON_CURVE;
    return inG2(p) ? undefined : `is on the twist but not in the r-order subgroup G2 (corrupt or crafted ${subject})`;
  };

  return { g1Problem, g2Problem };
}
