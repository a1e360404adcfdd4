// Types for snarkjsDeps.mjs (plain JS, shared with the prover threads and the build process).
export declare const snarkjsDependency: (name: string) => Promise<unknown>
export declare const snarkjsThreadData: (name: string) => { readonly mod: string; readonly type: "module"; readonly name: string }
