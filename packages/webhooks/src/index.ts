export * from "./events.js"
export * from "./verify.js"
