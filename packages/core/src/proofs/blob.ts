import { Either, Option, Schema } from "effect"
import { base64 } from "../kernel/encoding.js"
import { SnarkjsProof } from "./proof.js"

/** `proof_blob`: base64 of the snarkjs proof JSON, so anyone can verify it with snarkjs. */
export const encodeProofBlob = (proof: SnarkjsProof): string => base64(new TextEncoder().encode(JSON.stringify(proof)))

const decodeProof = Schema.decodeUnknownEither(SnarkjsProof)

/** A stored blob back to its proof; none when it is not base64 of JSON in the shape of a snarkjs proof. */
export const decodeProofBlob = (blob: string): Option.Option<SnarkjsProof> => {
  try {
    const binary = atob(blob)
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    return Either.getRight(decodeProof(JSON.parse(new TextDecoder().decode(bytes))))
  } catch {
    return Option.none()
  }
}
