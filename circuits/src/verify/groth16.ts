import * as snarkjs from "snarkjs"
import { MAX_PUBLIC, type SystemModule } from "./system.js"

/** Groth16, as snarkjs writes `verification_key.json` and `proof.json`. */
export const groth16: SystemModule = {
  system: "groth16",
  readKey: (reader, value) => {
    const key = reader.object(value, "verification_key")
    if (key === undefined) return undefined
    reader.names(key, "verification_key", "groth16", true)
    const nPublic = reader.int(key, "nPublic", "verification_key", 0, MAX_PUBLIC)
    reader.g1(key, "vk_alpha_1", "verification_key")
    for (const field of ["vk_beta_2", "vk_gamma_2", "vk_delta_2"]) reader.g2(key, field, "verification_key")
    const ic = key["IC"]
    if (!Array.isArray(ic)) reader.problem("verification_key.IC", "must be an array of G1 points, one more than nPublic")
    else if (nPublic !== undefined && ic.length !== nPublic + 1) {
      reader.problem("verification_key.IC", `must hold nPublic + 1 = ${nPublic + 1} points, not ${ic.length}`)
    } else ic.forEach((point, i) => reader.g1At(point, `verification_key.IC.${i}`))
    return nPublic
  },
  readProof: (reader, value) => {
    const proof = reader.object(value, "proof")
    if (proof === undefined) return
    reader.names(proof, "proof", "groth16", false)
    reader.g1(proof, "pi_a", "proof")
    reader.g2(proof, "pi_b", "proof")
    reader.g1(proof, "pi_c", "proof")
  },
  verify: (key, publicSignals, proof) => snarkjs.groth16.verify(key, publicSignals, proof)
}
