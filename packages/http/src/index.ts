export * from "./api.js"
export * from "./app.js"
export * from "./errors.js"
export { CurrentRequestNotes, MAX_BODY_BYTES, rateLimitHeaders, type RequestNotes } from "./requestPipeline.js"
