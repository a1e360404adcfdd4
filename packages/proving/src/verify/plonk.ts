import * as snarkjs from "snarkjs"
import { MAX_POWER, MAX_PUBLIC, type SnarkjsVerify, type SystemModule } from "./system.js"

const KEY_G1 = ["Qm", "Ql", "Qr", "Qo", "Qc", "S1", "S2", "S3"]
const PROOF_G1 = ["A", "B", "C", "Z", "T1", "T2", "T3", "Wxi", "Wxiw"]
const PROOF_SCALARS = ["eval_a", "eval_b", "eval_c", "eval_s1", "eval_s2", "eval_zw"]

const { plonk } = snarkjs as unknown as { readonly plonk: SnarkjsVerify }

/** PLONK, as snarkjs writes its verification key and proof (`snarkjs plonk setup/prove`). */
export const plonkModule: SystemModule = {
  system: "plonk",
  readKey: (reader, value) => {
    const key = reader.object(value, "verification_key")
    if (key === undefined) return undefined
    reader.names(key, "verification_key", "plonk", true)
    const nPublic = reader.int(key, "nPublic", "verification_key", 0, MAX_PUBLIC)
    reader.int(key, "power", "verification_key", 1, MAX_POWER)
    for (const field of ["k1", "k2", "w"]) reader.scalar(key, field, "verification_key")
    for (const field of KEY_G1) reader.g1(key, field, "verification_key", "allowed")
    reader.g2(key, "X_2", "verification_key", "refused")
    return nPublic
  },
  readProof: (reader, value) => {
    const proof = reader.object(value, "proof")
    if (proof === undefined) return
    reader.names(proof, "proof", "plonk", false)
    for (const field of PROOF_G1) reader.g1(proof, field, "proof", "allowed")
    for (const field of PROOF_SCALARS) reader.scalar(proof, field, "proof")
  },
  verify: (key, publicSignals, proof) => plonk.verify(key, publicSignals, proof)
}
