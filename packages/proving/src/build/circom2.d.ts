// circom2 ships no types; this declares only what the compile thread (circomWorker.mjs) uses.
declare module "circom2" {
  export class CircomRunner {
    constructor(options: {
      readonly args: ReadonlyArray<string>
      readonly env: Record<string, string>
      readonly preopens: Record<string, string>
      readonly bindings: Record<string, unknown>
    })
    execute(wasm: Uint8Array): Promise<unknown>
  }
  export const bindings: Record<string, unknown>
}
