/**
 * mzk inside an Express app that parses JSON for its own routes: mounted at /api/v1, it routes by
 * `req.originalUrl` and takes the bodies express.json() already read; uploads still stream to it.
 *
 *   pnpm exec tsx examples/src/embedInExpress.ts   # prints an API key, listens on 127.0.0.1:3001
 *   curl localhost:3001/api/v1/proofs -H "Authorization: Bearer mzk_…" \
 *     -H 'content-type: application/json' -d '{"type":"multiplier","inputs":{"a":3,"b":11}}'
 */
import { createMzk } from "@mzk/server"
import express from "express"

const mzk = await createMzk({ database: process.env.MZK_DATABASE_URL ?? "sqlite::memory:" })
await mzk.start()
const { api_key } = await mzk.createAccount({ name: "Example" })
console.log(`API key (shown once): ${api_key}`)

const app = express()
app.use(express.json())
app.get("/health", (_request, response) => void response.json({ ok: true }))
app.use("/api/v1", mzk.handler)

const server = app.listen(3001, "127.0.0.1", () => console.log("example app on http://127.0.0.1:3001"))
process.on("SIGINT", () => server.close(() => void mzk.stop()))
