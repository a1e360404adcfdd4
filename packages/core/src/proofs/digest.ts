import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"

/** JSON with object keys sorted at every depth: one text for one value, however its keys were ordered. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * What recognises a proof mzk made when it comes back to `POST /verifications`: SHA-256 of the
 * proof (keys in any order) and its public signals. The proof worker keeps it on the proof's row;
 * a verification that finds it among the account's proofs is that proof's, and records
 * `proof.verified` as `GET /proofs/{id}/verify` does. A proof is randomised, so another account's
 * proof or a foreign one never matches by chance.
 */
export const proofDigest = (proof: unknown, publicSignals: ReadonlyArray<string>): string =>
  bytesToHex(sha256(new TextEncoder().encode(canonical({ proof, public_signals: publicSignals }))))
