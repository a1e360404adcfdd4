export * from "./coreLayer.js"
export * from "./entropy.js"
export * from "./memoryStore.js"
