import * as snarkjs from "snarkjs"
import { MAX_PUBLIC, type SystemModule } from "./system.js"

const G2_INFINITY = JSON.stringify([["0", "0"], ["1", "0"], ["0", "0"]])
/** G2's generator, as snarkjs writes points. */
const G2_GENERATOR = [
  ["10857046999023057135944570762232829481370756359578518086990519993285655852781", "11559732032986387107991004021392285783925812861821192530917403151452391805634"],
  ["8495653923123431417604973247489272438418190587263600148770280649306958101930", "4082367875863433681332203403145435568316851327593401208105741076214120093531"],
  ["1", "0"]
]

/** Groth16, as snarkjs writes `verification_key.json` and `proof.json`. */
export const groth16: SystemModule = {
  system: "groth16",
  readKey: (reader, value) => {
    const key = reader.object(value, "verification_key")
    if (key === undefined) return undefined
    reader.names(key, "verification_key", "groth16", true)
    const nPublic = reader.int(key, "nPublic", "verification_key", 0, MAX_PUBLIC)
    reader.g1(key, "vk_alpha_1", "verification_key", "refused")
    for (const field of ["vk_beta_2", "vk_gamma_2", "vk_delta_2"]) reader.g2(key, field, "verification_key", "refused")
    const ic = key["IC"]
    if (!Array.isArray(ic)) reader.problem("verification_key.IC", "must be an array of G1 points, one more than nPublic")
    else if (nPublic !== undefined && ic.length !== nPublic + 1) {
      reader.problem("verification_key.IC", `must hold nPublic + 1 = ${nPublic + 1} points, not ${ic.length}`)
    } else ic.forEach((point, i) => reader.g1At(point, `verification_key.IC.${i}`, "allowed"))
    return nPublic
  },
  readProof: (reader, value) => {
    const proof = reader.object(value, "proof")
    if (proof === undefined) return
    reader.names(proof, "proof", "groth16", false)
    reader.g1(proof, "pi_a", "proof", "allowed")
    reader.g2(proof, "pi_b", "proof", "allowed")
    reader.g1(proof, "pi_c", "proof", "allowed")
  },
  verify: (key, publicSignals, proof) => snarkjs.groth16.verify(key, publicSignals, proof),
  // With π_B at infinity the equation's term e(−π_A, π_B) is 1, whatever π_A is; snarkjs's pairing
  // (ffjavascript) takes e(P, O) for something else and refuses every such proof, also where the
  // equation holds. The same term with π_A at infinity and π_B = G2's generator is 1 too, and
  // computed right by snarkjs and the native verifier alike.
  equivalentProof: (proof) => {
    const fields = proof as Record<string, unknown>
    return JSON.stringify(fields["pi_b"]) === G2_INFINITY ? { ...fields, pi_a: ["0", "1", "0"], pi_b: G2_GENERATOR } : proof
  }
}
