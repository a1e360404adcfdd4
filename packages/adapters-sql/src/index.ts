export * from "./connection.js"
export * from "./migrations.js"
export * from "./schema.js"
export * from "./store.js"
