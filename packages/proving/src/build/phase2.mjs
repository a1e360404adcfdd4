// The production phase 2 of a circom source against the operator's ptau, in the native engine:
// prover-native's phase2NewZkey writes snarkjs's `zkey new` (byte for byte, reading only the ptau
// sections the circuit needs), then phase2Contribute applies one contribution in place (a fresh δ
// from the OS CSPRNG, held and wiped in native memory; δ₁ δ₂ times δ, C and H times δ⁻¹). This
// file writes the small record snarkjs's `zkey verify` checks: the transcript (BLAKE2b-512), its
// hash to G2 (ffjavascript's ChaCha + G2.fromRng, the very functions snarkjs verifies with) and
// section 10. Plain JS: the build job (a bare node process) loads it.
// @ts-check
import { loadNativeProver } from "@mzk/prover-native";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { performance } from "node:perf_hooks";
import * as snarkjs from "snarkjs";
import { fileReader, readSections } from "../formats/iden3.mjs";
import { snarkjsDependency } from "../snarkjsDeps.mjs";

/**
 * @typedef {import("@mzk/prover-native").NativeProverAddon} NativeProverAddon
 * @typedef {import("@mzk/prover-native").Phase2Info} Phase2Info
 */

/**
 * What this file uses of ffjavascript's bn128 (snarkjs's curve; it ships no types).
 * @typedef {import("snarkjs").Curve & {
 *   readonly G1: { fromRprLEM(buff: Uint8Array, o: number): unknown; toRprUncompressed(buff: Uint8Array, o: number, p: unknown): void }
 *   readonly G2: { fromRng(rng: unknown): unknown; toAffine(p: unknown): unknown; toRprLEM(buff: Uint8Array, o: number, p: unknown): void }
 *   readonly tm: { queueAction(commands: ReadonlyArray<object>): Promise<ReadonlyArray<ArrayBufferLike>> }
 * }} Bn128
 */

/** @returns {Promise<Bn128>} */
const bn128 = async () => /** @type {Bn128} */ (await snarkjs.curves.getCurveFromName("bn128", { singleThread: true }));

/**
 * The addon when it has the native phase 2, else undefined (snarkjs does it all then).
 * @returns {NativeProverAddon | undefined}
 */
export function nativePhase2() {
  const native = loadNativeProver();
  return native.ok && typeof native.addon.phase2NewZkey === "function" ? native.addon : undefined;
}

/** @param {number} n */
const u32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

/**
 * The sections of an iden3 file, read once by the one reader of their tables: type → { header
 * (where its type and size are written, to rewrite the size after the contribution), pos, size },
 * for the types that occur exactly once.
 * @param {number} fd
 * @param {string} magic
 */
function sectionsOf(fd, magic) {
  const { sections } = readSections(fileReader(fd), magic);
  /** @type {Map<number, { header: number; pos: number; size: number }>} */
  const out = new Map();
  for (const [type, list] of sections) {
    const [one] = list;
    if (list.length === 1 && one !== undefined) out.set(type, { header: one.start - 12, pos: one.start, size: one.size });
  }
  return out;
}

/**
 * One contribution to a zkey as phase2NewZkey wrote it (no contribution yet; section 10 last).
 * The record is laid out as snarkjs's writeContribution lays it out, so `snarkjs zkey verify` and
 * later `zkey contribute` runs read it.
 * @param {NativeProverAddon} addon
 * @param {string} zkey
 * @param {{ readonly name?: string; readonly threads?: number }} [options]
 * @returns {Promise<void>}
 */
export async function contribute(addon, zkey, { name = "mzk server contribution", threads = 1 } = {}) {
  // One thread: a few curve operations, not worth starting snarkjs's worker pool (seconds).
  const curve = await bn128();
  const { ChaCha } = await snarkjsDependency("ffjavascript");
  const fd = fs.openSync(zkey, "r+");
  try {
    const mpc = sectionsOf(fd, "zkey").get(10);
    const end = fs.fstatSync(fd).size;
    if (mpc === undefined || mpc.size !== 68 || mpc.pos + mpc.size !== end) throw new Error("the zkey is not a fresh phase2NewZkey output");
    const csHash = Buffer.alloc(64);
    fs.readSync(fd, csHash, 0, 64, mpc.pos);
    /** @param {Uint8Array} lem */
    const uncompressed = (lem) => {
      const u = new Uint8Array(64);
      curve.G1.toRprUncompressed(u, 0, curve.G1.fromRprLEM(lem, 0));
      return u;
    };
    /** @type {Buffer | undefined} */
    let transcript;
    const record = addon.phase2Contribute(zkey, {
      threads,
      hashToG2: (g1s, g1sx) => {
        const digest = createHash("blake2b512").update(csHash).update(uncompressed(g1s)).update(uncompressed(g1sx)).digest();
        transcript = digest;
        // snarkjs's hashToG2: ChaCha seeded with the transcript's first eight big-endian words.
        const seed = [];
        for (let i = 0; i < 8; i++) seed.push(digest.readUInt32BE(i * 4));
        const g2sp = curve.G2.toAffine(curve.G2.fromRng(new ChaCha(seed)));
        const out = new Uint8Array(128);
        curve.G2.toRprLEM(out, 0, g2sp);
        return out;
      },
    });
    if (transcript === undefined) throw new Error("the native contribution did not hash its transcript");
    const nameBytes = Buffer.from(name.substring(0, 64), "utf8");
    const params = Buffer.concat([Buffer.from([1, nameBytes.length]), nameBytes]);
    const body = Buffer.concat([
      csHash,
      u32(1),
      record.deltaAfter,
      record.g1s,
      record.g1sx,
      record.g2spx,
      transcript,
      u32(0),
      u32(params.length),
      params,
    ]);
    fs.writeSync(fd, body, 0, body.length, mpc.pos);
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(body.length));
    fs.writeSync(fd, size, 0, 8, mpc.header + 4);
    fs.ftruncateSync(fd, mpc.pos + body.length);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * @param {number} fd
 * @param {number} pos
 * @param {number} n
 */
const readAt = (fd, pos, n) => {
  const b = Buffer.alloc(n);
  if (fs.readSync(fd, b, 0, n, pos) !== n) throw new Error("short read");
  return b;
};

/**
 * Where the circuit's domain is the ptau's whole power and above 2^14, snarkjs's circuit hash
 * (zkey_new.js, hashHPoints) takes τ^(2n−1) − τ^(n−1) with τ^(2n−1) read one point past the end
 * of the ptau's τ section: 64 bytes of whatever follows it in the file. What that "point" hashes
 * to is whatever snarkjs's WebAssembly makes of those bytes, so it is computed here by the same
 * WebAssembly calls on the same bytes, and handed to the native code. Undefined where not needed.
 * @param {string} r1cs
 * @param {string} ptau
 * @returns {Promise<Uint8Array | undefined>}
 */
export async function pastEndPoint(r1cs, ptau) {
  const rfd = fs.openSync(r1cs, "r");
  const pfd = fs.openSync(ptau, "r");
  try {
    const header = sectionsOf(rfd, "r1cs").get(1);
    if (header === undefined) return undefined;
    const h = readAt(rfd, header.pos + 36, 28);
    const nPublic = h.readUInt32LE(4) + h.readUInt32LE(8);
    const sizing = h.readUInt32LE(24) + nPublic;
    const cirPower = (sizing === 0 ? 0 : 31 - Math.clz32(sizing)) + 1; // snarkjs: log2(n) + 1
    const ps = sectionsOf(pfd, "ptau");
    const ph = ps.get(1);
    const tau = ps.get(2);
    if (ph === undefined || tau === undefined) return undefined;
    const power = readAt(pfd, ph.pos + 4 + 32, 4).readUInt32LE(0);
    const domainSize = 2 ** cirPower;
    if (!(domainSize > 2 ** 14 && cirPower === power)) return undefined;
    const past = readAt(pfd, tau.pos + (2 * domainSize - 1) * 64, 64);
    const last = readAt(pfd, tau.pos + (domainSize - 1) * 64, 64);
    const curve = await bn128();
    const [out] = await curve.tm.queueAction([
      { cmd: "ALLOCSET", var: 0, buff: past },
      { cmd: "ALLOCSET", var: 1, buff: last },
      { cmd: "ALLOC", var: 2, len: 96 },
      { cmd: "CALL", fnName: "g1m_subAffine", params: [{ var: 0 }, { var: 1 }, { var: 2 }] },
      { cmd: "CALL", fnName: "g1m_batchToAffine", params: [{ var: 2 }, { val: 1 }, { var: 2 }] },
      { cmd: "CALL", fnName: "g1m_batchLEMtoU", params: [{ var: 2 }, { val: 1 }, { var: 2 }] },
      { cmd: "GET", out: 0, var: 2, len: 64 },
    ]);
    return out === undefined ? undefined : new Uint8Array(out);
  } catch {
    // A ptau too short to read these from: the native code refuses it with the reason.
    return undefined;
  } finally {
    fs.closeSync(rfd);
    fs.closeSync(pfd);
  }
}

/**
 * r1cs + ptau → a contributed zkey at `zkey`, all in the native engine but the record. Throws the
 * addon's MZK_INVALID_INPUT error (with the reason) for a ptau that cannot serve. Returns what each
 * step took, in milliseconds.
 * @param {{
 *   readonly r1cs: string
 *   readonly ptau: string
 *   readonly zkey: string
 *   readonly threads?: number
 *   readonly name?: string
 *   readonly addon?: NativeProverAddon | undefined
 * }} options `addon` defaults to nativePhase2()
 * @returns {Promise<{ readonly info: Phase2Info; readonly newZkeyMs: number; readonly contributeMs: number }>}
 */
export async function contributeNative({ r1cs, ptau, zkey, threads = 1, name = "mzk server contribution", addon = nativePhase2() }) {
  if (addon === undefined) throw new Error("the native prover addon is not loaded");
  try {
    const t0 = performance.now();
    const pastEnd = await pastEndPoint(r1cs, ptau);
    const info = addon.phase2NewZkey(r1cs, ptau, zkey, pastEnd === undefined ? { threads } : { threads, pastEnd });
    const t1 = performance.now();
    await contribute(addon, zkey, { name, threads });
    const t2 = performance.now();
    return { info, newZkeyMs: t1 - t0, contributeMs: t2 - t1 };
  } catch (e) {
    fs.rmSync(zkey, { force: true });
    throw e;
  }
}
