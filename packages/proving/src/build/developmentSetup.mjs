// The native development setup (@mzk/prover-native's setupDevelopment) as the build process runs
// it: a key from fresh toxic waste for any circuit size, no powers of tau. Its MPC-params section
// carries one contribution whose proof of knowledge is checked against snarkjs's hashToG2 of the
// contribution's transcript, so the point is computed here with snarkjs's own ffjavascript (the
// module `snarkjs zkey verify` uses) and handed to the native code.
// @ts-check
import { loadNativeProver } from "@mzk/prover-native";
import { snarkjsDependency } from "../snarkjsDeps.mjs";

/**
 * The addon when it has the native development setup, else undefined (snarkjs's dev ptau is the fallback).
 * @returns {import("@mzk/prover-native").NativeProverAddon | undefined}
 */
export function nativeDevelopmentSetup() {
  const native = loadNativeProver();
  return native.ok && typeof native.addon.setupDevelopment === "function" ? native.addon : undefined;
}

/**
 * snarkjs's hashToG2: the transcript's first 32 bytes, read as eight big-endian words, seed
 * ffjavascript's ChaCha, and G2.fromRng draws the point; returned affine, 128 bytes LEM. Needs a
 * bn128 curve (ffjavascript) made beforehand, since the native code calls it synchronously.
 * ffjavascript ships no types: `ff` is the module, `curve` its bn128.
 * @param {any} ff
 * @param {any} curve
 * @returns {(transcript: Uint8Array) => Uint8Array}
 */
export function hashToG2With(ff, curve) {
  return (transcript) => {
    const view = new DataView(transcript.buffer, transcript.byteOffset, transcript.byteLength);
    const seed = Array.from({ length: 8 }, (_, i) => view.getUint32(i * 4));
    const out = new Uint8Array(128);
    curve.G2.toRprLEM(out, 0, curve.G2.toAffine(curve.G2.fromRng(new ff.ChaCha(seed))));
    return out;
  };
}

/**
 * Sets up `r1csPath` into `zkeyPath` natively; resolves to setupDevelopment's result.
 * @param {import("@mzk/prover-native").NativeProverAddon} addon
 * @param {string} r1csPath
 * @param {string} zkeyPath
 * @param {Omit<import("@mzk/prover-native").DevelopmentSetupOptions, "hashToG2">} [options]
 * @returns {Promise<import("@mzk/prover-native").DevelopmentSetup>}
 */
export async function setUpDevelopmentKey(addon, r1csPath, zkeyPath, options = {}) {
  const ff = await snarkjsDependency("ffjavascript");
  const curve = await ff.getCurveFromName("bn128", { singleThread: true });
  try {
    return addon.setupDevelopment(r1csPath, zkeyPath, { ...options, hashToG2: hashToG2With(ff, curve) });
  } finally {
    await curve.terminate();
  }
}
