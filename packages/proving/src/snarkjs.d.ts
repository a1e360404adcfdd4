// snarkjs ships no types; this declares only what mzk uses.
declare module "snarkjs" {
  export interface Groth16Proof {
    readonly pi_a: ReadonlyArray<string>
    readonly pi_b: ReadonlyArray<ReadonlyArray<string>>
    readonly pi_c: ReadonlyArray<string>
    readonly protocol: string
    readonly curve: string
  }
  export const groth16: {
    fullProve(
      input: Record<string, unknown>,
      wasm: string | Uint8Array,
      zkey: string | Uint8Array
    ): Promise<{ proof: Groth16Proof; publicSignals: Array<string> }>
    prove(zkey: string | Uint8Array, witness: string | Uint8Array): Promise<{ proof: Groth16Proof; publicSignals: Array<string> }>
    verify(vkey: unknown, publicSignals: ReadonlyArray<string>, proof: unknown): Promise<boolean>
  }
  /** PLONK and FFLONK as the verification thread uses them (the prover thread calls them too). */
  export const plonk: { verify(vkey: unknown, publicSignals: ReadonlyArray<string>, proof: unknown): Promise<boolean> }
  export const fflonk: { verify(vkey: unknown, publicSignals: ReadonlyArray<string>, proof: unknown): Promise<boolean> }
  /** An ffjavascript curve; each caller states the little more of it that it uses. */
  export interface Curve {
    terminate(): Promise<void>
  }
  export const curves: { getCurveFromName(name: "bn128" | "bls12381", options?: { readonly singleThread?: boolean }): Promise<Curve> }
}
