import * as snarkjs from "snarkjs"
import { MAX_POWER, MAX_PUBLIC, type SnarkjsVerify, type SystemModule } from "./system.js"

const KEY_SCALARS = ["k1", "k2", "w", "w3", "w4", "w8", "wr"]
const COMMITMENTS = ["C1", "C2", "W1", "W2"]
const EVALUATIONS = ["ql", "qr", "qm", "qo", "qc", "s1", "s2", "s3", "a", "b", "c", "z", "zw", "t1w", "t2w", "inv"]

const { fflonk } = snarkjs as unknown as { readonly fflonk: SnarkjsVerify }

/** FFLONK, as snarkjs writes its verification key and proof (`snarkjs fflonk setup/prove`). */
export const fflonkModule: SystemModule = {
  system: "fflonk",
  readKey: (reader, value) => {
    const key = reader.object(value, "verification_key")
    if (key === undefined) return undefined
    reader.names(key, "verification_key", "fflonk", true)
    const nPublic = reader.int(key, "nPublic", "verification_key", 0, MAX_PUBLIC)
    reader.int(key, "power", "verification_key", 1, MAX_POWER)
    for (const field of KEY_SCALARS) reader.scalar(key, field, "verification_key")
    reader.g2(key, "X_2", "verification_key", "refused")
    reader.g1(key, "C0", "verification_key", "allowed")
    return nPublic
  },
  readProof: (reader, value) => {
    const proof = reader.object(value, "proof")
    if (proof === undefined) return
    reader.names(proof, "proof", "fflonk", false)
    const polynomials = reader.object(proof["polynomials"], "proof.polynomials")
    if (polynomials !== undefined) for (const field of COMMITMENTS) reader.g1(polynomials, field, "proof.polynomials", "allowed")
    const evaluations = reader.object(proof["evaluations"], "proof.evaluations")
    if (evaluations !== undefined) for (const field of EVALUATIONS) reader.scalar(evaluations, field, "proof.evaluations")
  },
  // snarkjs's fflonk verifier logs through its logger argument only; it needs none.
  verify: (key, publicSignals, proof) => fflonk.verify(key, publicSignals, proof)
}
