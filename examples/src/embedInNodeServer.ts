/**
 * An existing Node HTTP server that mounts mzk under /api/v1 and lets its own signed-in users call
 * mzk with their session token, next to automated clients that use mzk API keys. mzk's proof
 * worker and webhook delivery run in this process (`start()`).
 *
 *   pnpm exec tsx examples/src/embedInNodeServer.ts      # listens on 127.0.0.1:3000
 *   curl -X POST localhost:3000/login -d '{"user":"ada"}'  # → {"session":"sess_…"}
 *   curl localhost:3000/api/v1/proofs -H "Authorization: Bearer sess_…" \
 *     -H 'content-type: application/json' -d '{"type":"multiplier","inputs":{"a":3,"b":11}}'
 */
import { createMzk } from "@mzk/server"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage } from "node:http"

// The application's own user and session store (in memory here).
const accountOfUser = new Map<string, string>()
const userOfSession = new Map<string, string>()

const mzk = await createMzk({
  database: process.env.MZK_DATABASE_URL ?? "sqlite:./data/example.db",
  // mzk asks the application who a session token belongs to; API keys never reach this function.
  sessionAuthenticator: (token) => {
    const account_id = accountOfUser.get(userOfSession.get(token) ?? "")
    return account_id === undefined ? null : { account_id }
  }
})
await mzk.start()

const readJson = async (request: IncomingMessage): Promise<Record<string, unknown>> => {
  let text = ""
  for await (const chunk of request) text += chunk
  return text === "" ? {} : JSON.parse(text)
}

const server = createServer(async (request, response) => {
  if (request.url?.startsWith("/api/v1/")) return mzk.handler(request, response)
  if (request.method === "POST" && request.url === "/login") {
    const { user } = await readJson(request)
    if (typeof user !== "string") return void response.writeHead(400).end()
    if (!accountOfUser.has(user)) {
      // First sign-in: the user gets an mzk account of their own (and a first API key, unused here).
      const created = await mzk.createAccount({ name: user }).catch(() => undefined)
      if (created === undefined) return void response.writeHead(400).end()
      accountOfUser.set(user, created.account_id)
    }
    const session = `sess_${randomUUID()}`
    userOfSession.set(session, user)
    return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ session }))
  }
  response.writeHead(404).end()
})

server.listen(3000, "127.0.0.1", () => console.log("example app on http://127.0.0.1:3000"))
// Stop accepting first, then stop mzk: running proofs are handed back, the database closes.
process.on("SIGINT", () => server.close(() => void mzk.stop()))
