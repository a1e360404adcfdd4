// Types for phase2.mjs (plain JS so the build job, a bare node process, can load it).
import type { Phase2Info } from "@mzk/prover-native"

export type { Phase2Info }
export declare function nativePhase2(): unknown
export declare function pastEndPoint(r1cs: string, ptau: string): Promise<Uint8Array | undefined>
export declare function contribute(addon: unknown, zkey: string, options?: { readonly name?: string; readonly threads?: number }): Promise<void>
export declare function contributeNative(options: {
  readonly r1cs: string
  readonly ptau: string
  readonly zkey: string
  readonly threads?: number
  readonly name?: string
  /** The addon to use (default: nativePhase2()). */
  readonly addon?: unknown
}): Promise<{ readonly info: Phase2Info; readonly newZkeyMs: number; readonly contributeMs: number }>
