/**
 * An existing Node HTTP server that mounts mzk under /api/v1 and lets its own signed-in users call
 * mzk with their session token, next to automated clients that use mzk API keys.
 *
 *   pnpm exec tsx examples/src/embedInNodeServer.ts      # listens on 127.0.0.1:3000
 *   curl -X POST localhost:3000/login -d '{"user":"ada"}'  # → {"session":"sess_…"}
 *   curl localhost:3000/api/v1/keys -H "Authorization: Bearer sess_…"
 */
import { type AccountId, Accounts, CreateAccountInput, decodeInput, SessionAuthenticator } from "@mzk/core"
import { makeNodeHandler, parseDatabaseUrl } from "@mzk/server"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"

// The application's own user and session store (in memory here).
const accountOfUser = new Map<string, AccountId>()
const userOfSession = new Map<string, string>()

// mzk asks the application who a session token belongs to; API keys never reach this function.
const AppSessions = Layer.succeed(SessionAuthenticator, {
  authenticate: (token) => {
    const user = userOfSession.get(Redacted.value(token))
    const account = user === undefined ? undefined : accountOfUser.get(user)
    return Effect.succeed(account === undefined ? Option.none() : Option.some({ account_id: account }))
  }
})

const database = Either.getOrThrow(parseDatabaseUrl(process.env.MZK_DATABASE_URL ?? "sqlite:./data/example.db"))
const mzk = await makeNodeHandler({ database, sessions: AppSessions })

const readJson = async (request: import("node:http").IncomingMessage): Promise<Record<string, unknown>> => {
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
      // First sign-in: give the user an mzk account of their own. The core takes decoded values, so
      // the name is decoded here, at the boundary where it arrived.
      const created = await mzk.runtime.runPromise(
        Effect.either(Effect.flatMap(decodeInput(CreateAccountInput)({ name: user }), (input) => Effect.flatMap(Accounts, (a) => a.create(input))))
      )
      if (created._tag === "Left") return void response.writeHead(400).end()
      accountOfUser.set(user, created.right.id)
    }
    const session = `sess_${randomUUID()}`
    userOfSession.set(session, user)
    return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ session }))
  }
  response.writeHead(404).end()
})

server.listen(3000, "127.0.0.1", () => console.log("example app on http://127.0.0.1:3000"))
process.on("SIGINT", () => server.close(() => void mzk.dispose()))
