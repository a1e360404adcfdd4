import express from "express"
import { createRequire } from "node:module"
import type { IncomingMessage } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createMzk, type Mzk } from "../../src/createMzk.js"
import { listen, proveThrough, uploadThrough } from "./embedded.js"

// Express 4 is still what most existing apps run; its body parsers leave `req.body = {}` on
// requests they do not parse, where Express 5's leave it undefined.
const express4 = createRequire(import.meta.url)("express4") as typeof express

/** How the app reads bodies before mzk sees them. */
type Bodies = "none" | "json" | "json keeping rawBody"

const bodyParsers = (make: typeof express, bodies: Bodies) =>
  bodies === "none" ? [] : bodies === "json" ? [make.json()] : [
    make.json({ verify: (request: IncomingMessage & { rawBody?: Buffer }, _response, raw) => void (request.rawBody = raw) })
  ]

let mzk: Mzk
let token: string
beforeAll(async () => {
  mzk = await createMzk({ database: "sqlite::memory:" })
  await mzk.start()
  token = (await mzk.createAccount({ name: "Express app" })).api_key
})
afterAll(() => mzk.stop())

const cases: ReadonlyArray<{ readonly version: string; readonly make: typeof express; readonly mount: string; readonly bodies: Bodies }> = [
  ...(["/", "/mzk", "/api/v1", "/api"] as const).flatMap((mount) =>
    (["none", "json"] as const).map((bodies) => ({ version: "5", make: express, mount, bodies }))),
  { version: "5", make: express, mount: "/mzk", bodies: "json keeping rawBody" },
  { version: "4", make: express4, mount: "/api/v1", bodies: "json" },
  { version: "4", make: express4, mount: "/mzk", bodies: "json" },
  { version: "4", make: express4, mount: "/", bodies: "none" }
]

describe("createMzk's handler mounted in Express", () => {
  let uploads = 0
  for (const { version, make, mount, bodies } of cases) {
    it(`Express ${version}: app.use(${JSON.stringify(mount)}, mzk.handler), bodies read by ${bodies === "none" ? "mzk" : `express.${bodies}`}`, async () => {
      const app = make()
      for (const parser of bodyParsers(make, bodies)) app.use(parser)
      app.get("/health", (_request, response) => void response.json({ ok: true }))
      app.use(mount, mzk.handler)
      app.get("/after", (_request, response) => void response.json({ after: true }))
      const server = await listen(app)
      try {
        // Mounted at /api or /api/v1, mzk's paths are the app's; under /mzk they sit beneath it.
        const baseUrl = mount === "/mzk" ? `${server.origin}/mzk` : server.origin
        await proveThrough(baseUrl, token)
        // express.json() reads only JSON bodies: an upload still streams to mzk.
        await uploadThrough(baseUrl, token, `upload_${++uploads}`)
        // The app's own routes are untouched, those after mzk too: mzk passes on what is not its.
        expect(await (await fetch(`${server.origin}/health`)).json()).toEqual({ ok: true })
        expect(await (await fetch(`${server.origin}/after`)).json()).toEqual({ after: true })
        const unknown = await fetch(`${baseUrl}/api/v1/nothing`, { headers: { authorization: `Bearer ${token}` } })
        expect([unknown.status, ((await unknown.json()) as { error: { code: string } }).error.code]).toEqual([404, "not_found"])
      } finally {
        await server.close()
      }
    }, 120_000)
  }

  it("a JSON body express.json() parsed is answered as mzk would answer it read from the stream", async () => {
    const app = express()
    app.use(express.json())
    app.use("/api/v1", mzk.handler)
    const server = await listen(app)
    try {
      const wrong = await fetch(`${server.origin}/api/v1/proofs`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ type: "multiplier", inputs: { a: 3 } })
      })
      expect(wrong.status).toBe(400)
      expect(await wrong.json()).toMatchObject({ error: { code: "invalid_request" } })
    } finally {
      await server.close()
    }
  })
})
