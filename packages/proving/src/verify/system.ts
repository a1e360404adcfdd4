import type { ProvingSystem } from "@mzk/core"
import type { JsonReader } from "./fields.js"

/**
 * One proving system's verification, in its own format: what `makeVerifier` dispatches to by
 * `proving_system`. Adding a system is one such module listed in `index.ts`. `readKey` and
 * `readProof` note every problem (paths from `verification_key` and `proof`) and the points met;
 * `verify` runs only on inputs they passed, whose points were checked on the curve.
 */
export interface SystemModule {
  readonly system: ProvingSystem
  /** The key's count of public signals, or undefined when it is malformed (problems noted). */
  readonly readKey: (reader: JsonReader, key: unknown) => number | undefined
  readonly readProof: (reader: JsonReader, proof: unknown) => void
  readonly verify: (key: unknown, publicSignals: ReadonlyArray<string>, proof: unknown) => Promise<boolean>
  /**
   * The proof `verify` is given, where a module gives an equivalent one instead: the same answer
   * of the equation, in a form every verifier behind it computes right. Absent: the proof as sent.
   */
  readonly equivalentProof?: (proof: unknown) => unknown
}

/** The most public signals a key may declare: POST /verifications takes at most this many. */
export const MAX_PUBLIC = 10_000
/** The largest circuit's domain, 2^power, ffjavascript's roots of unity go to (BN254's two-adicity). */
export const MAX_POWER = 28

/** What snarkjs offers for verifying, beyond src/snarkjs.d.ts's Groth16 prover. */
export interface SnarkjsVerify {
  readonly verify: (key: unknown, publicSignals: ReadonlyArray<string>, proof: unknown, logger?: unknown) => Promise<boolean>
}
