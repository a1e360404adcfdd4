// The verification thread (thread.ts starts it): proofs made elsewhere verified off the request's
// thread. Groth16 by the native addon where `workerData.native` asks for it and it loads (the key
// prepared, kept for the next proof of it, up to 8 keys: foreign keys come in any number and a
// prepared one holds up to 2.5 MB of tables; then one final exponentiation for the four pairings;
// a key it will not prepare, α₁ β₂ γ₂ or δ₂ at infinity, is left to snarkjs so both answer alike);
// everything else by snarkjs, on a single-threaded bn128 curve of its own (the curve's default
// helper threads would only compete with the provers). Plain JS so vitest, tsx and node all load it.
import { loadNativeProver } from "@mzk/prover-native"
import { parentPort, workerData } from "node:worker_threads"
import * as snarkjs from "snarkjs"
import { snarkjsDependency } from "../snarkjsDeps.mjs"
import { makeVerifyingKeys } from "./verifyingKeys.mjs"

const { buildBn128 } = await snarkjsDependency("ffjavascript")
globalThis.curve_bn128 = await buildBn128(true)

const loaded = workerData.native ? loadNativeProver() : undefined
const addon = loaded?.ok ? loaded.addon : undefined

const SNARKJS = { groth16: snarkjs.groth16, plonk: snarkjs.plonk, fflonk: snarkjs.fflonk }

const preparedKeyOf = addon === undefined ? undefined : makeVerifyingKeys(addon, 8)

const verify = async (system, key, publicSignals, proof) => {
  const prepared = system === "groth16" ? preparedKeyOf?.(key) : undefined
  if (prepared !== undefined) return { valid: addon.verifyGroth16(prepared, proof, publicSignals), by: "native" }
  const verifier = SNARKJS[system]
  if (verifier === undefined) throw new Error(`no verifier for ${system} here`)
  return { valid: (await verifier.verify(key, publicSignals, proof)) === true, by: "snarkjs" }
}

parentPort.on("message", async ({ id, system, key, publicSignals, proof }) => {
  try {
    parentPort.postMessage({ id, ...(await verify(system, key, publicSignals, proof)) })
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) })
  }
})
// Messages sent before this thread listened went to web-worker's listener: it asks only now.
parentPort.postMessage({ ready: true })
