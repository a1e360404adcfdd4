// Types for snarkjsDeps.mjs (plain JS, shared with the prover threads and the build process).
export declare const snarkjsDependency: (name: string) => Promise<unknown>
