export * from "./catalog.js"
export * from "./prover.js"
