export * from "./entropy.js"
