// circomlibjs ships no types; this declares only the Poseidon hash the tests use.
declare module "circomlibjs" {
  export interface Poseidon {
    (inputs: ReadonlyArray<bigint | string>): Uint8Array
    readonly F: { toObject(element: Uint8Array): bigint }
  }
  export function buildPoseidon(): Promise<Poseidon>
}
