import { Option } from "effect"
import { base64 } from "../kernel/encoding.js"

/** `proof_blob`: base64 of the snarkjs proof JSON, so anyone can verify it with snarkjs. */
export const encodeProofBlob = (proof: unknown): string => base64(new TextEncoder().encode(JSON.stringify(proof)))

export const decodeProofBlob = (blob: string): Option.Option<unknown> => {
  try {
    const binary = atob(blob)
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    return Option.some(JSON.parse(new TextDecoder().decode(bytes)) as unknown)
  } catch {
    return Option.none()
  }
}
