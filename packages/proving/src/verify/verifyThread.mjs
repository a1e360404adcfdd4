// The verification thread (thread.ts starts it): proofs made elsewhere verified off the request's
// thread. Groth16 by the native addon where `workerData.native` asks for it and it loads (the key
// prepared, kept for the next proof of it, up to 8 keys: foreign keys come in any number and a
// prepared one holds up to 2.5 MB of tables; then one final exponentiation for the four pairings;
// a key it will not prepare, α₁ β₂ γ₂ or δ₂ at infinity, is left to snarkjs so both answer alike);
// everything else by snarkjs, on a single-threaded bn128 curve of its own (the curve's default
// helper threads would only compete with the provers). Plain JS so vitest, tsx and node all load it.
// @ts-check
import { loadNativeProver } from "@mzk/prover-native"
import { parentPort, workerData } from "node:worker_threads"
import * as snarkjs from "snarkjs"
import { snarkjsDependency } from "../snarkjsDeps.mjs"
import { makeVerifyingKeys } from "./verifyingKeys.mjs"

const { buildBn128 } = await snarkjsDependency("ffjavascript")
// snarkjs looks for a bn128 curve here before building one with helper threads.
Object.assign(globalThis, { curve_bn128: await buildBn128(true) })

const loaded = workerData.native ? loadNativeProver() : undefined
const addon = loaded?.ok ? loaded.addon : undefined

/** @type {Readonly<Record<string, { verify(vkey: unknown, publicSignals: ReadonlyArray<string>, proof: unknown): Promise<boolean> } | undefined>>} */
const SNARKJS = { groth16: snarkjs.groth16, plonk: snarkjs.plonk, fflonk: snarkjs.fflonk }

const preparedKeyOf = addon === undefined ? undefined : makeVerifyingKeys(addon, 8)

/**
 * One request from thread.ts: the key and proof as the caller sent them (checked for shape there).
 * @typedef {{ id: number; system: string; key: any; publicSignals: Array<string>; proof: any }} VerifyRequest
 */

/**
 * @param {VerifyRequest["system"]} system
 * @param {VerifyRequest["key"]} key
 * @param {VerifyRequest["publicSignals"]} publicSignals
 * @param {VerifyRequest["proof"]} proof
 * @returns {Promise<{ valid: boolean; by: "native" | "snarkjs" }>}
 */
const verify = async (system, key, publicSignals, proof) => {
  const prepared = system === "groth16" ? preparedKeyOf?.(key) : undefined
  if (prepared !== undefined && addon !== undefined) return { valid: addon.verifyGroth16(prepared, proof, publicSignals), by: "native" }
  const verifier = SNARKJS[system]
  if (verifier === undefined) throw new Error(`no verifier for ${system} here`)
  return { valid: (await verifier.verify(key, publicSignals, proof)) === true, by: "snarkjs" }
}

// Started as a worker by thread.ts: never without a parent port.
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort)

port.on("message", async (/** @type {VerifyRequest} */ { id, system, key, publicSignals, proof }) => {
  try {
    port.postMessage({ id, ...(await verify(system, key, publicSignals, proof)) })
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) })
  }
})
// Messages sent before this thread listened went to web-worker's listener: it asks only now.
port.postMessage({ ready: true })
