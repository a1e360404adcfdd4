// What the benchmark circuits use of snarkjs beyond src/snarkjs.d.ts and the tests' declarations.
declare module "snarkjs" {
  export const wtns: {
    calculate(input: Record<string, unknown>, wasm: string | Uint8Array, wtns: string): Promise<void>
  }
}
