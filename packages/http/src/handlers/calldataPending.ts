import type { Groth16Proof } from "@mzk/core"

// TEMPORARY until c17-build's packages/core/src/proofs/calldata.ts is merged: same shape.
export const proofCalldata = (_proof: Groth16Proof, _signals: ReadonlyArray<string>): {
  readonly function: string
  readonly arguments: readonly [ReadonlyArray<string>, ReadonlyArray<ReadonlyArray<string>>, ReadonlyArray<string>, ReadonlyArray<string>]
  readonly calldata: string
} => {
  throw new Error("proofCalldata is not merged yet")
}
