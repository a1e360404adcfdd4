export * from "./entropy.js"
export * from "./database.js"
export * from "./mzk.js"
export * from "./nodeHandler.js"
