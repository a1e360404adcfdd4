export * from "./artifacts/files.js"
export * from "./catalog.js"
export * from "./prover.js"
export * from "./builder/index.js"
