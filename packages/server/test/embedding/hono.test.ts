import { getRequestListener } from "@hono/node-server"
import { Hono } from "hono"
import { mount } from "hono/mount"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createMzk, type Mzk } from "../../src/createMzk.js"
import { listen, proveThrough, uploadThrough } from "./embedded.js"

let mzk: Mzk
let token: string
beforeAll(async () => {
  mzk = await createMzk({ database: "sqlite::memory:" })
  await mzk.start()
  token = (await mzk.createAccount({ name: "Hono app" })).api_key
})
afterAll(() => mzk.stop())

/**
 * Each way Hono hands requests on: some keep the whole path (`c.req.raw`), others strip the mount
 * point from it (`app.mount`, `hono/mount`), cutting into mzk's own `/api/v1` when mounted there.
 */
const mounts: ReadonlyArray<{ readonly name: string; readonly base: string; readonly add: (app: Hono) => void }> = [
  { name: 'app.all("/api/v1/*", (c) => mzk.fetch(c.req.raw))', base: "", add: (app) => app.all("/api/v1/*", (c) => mzk.fetch(c.req.raw)) },
  // Deprecated in Hono 4.13 for hono/mount, still what most apps use.
  { name: 'app.mount("/api", mzk.fetch)', base: "", add: (app) => app.mount("/api", mzk.fetch) },
  { name: 'app.mount("/mzk", mzk.fetch)', base: "/mzk", add: (app) => app.mount("/mzk", mzk.fetch) },
  { name: 'app.all("/api/v1/*", mount(mzk.fetch)) (hono/mount)', base: "", add: (app) => app.all("/api/v1/*", mount(mzk.fetch)) }
]

describe("createMzk's fetch handler in Hono on @hono/node-server", () => {
  let uploads = 0
  for (const { name, base, add } of mounts) {
    it(name, async () => {
      const app = new Hono()
      app.get("/health", (c) => c.json({ ok: true }))
      add(app)
      const server = await listen(getRequestListener(app.fetch))
      try {
        await proveThrough(`${server.origin}${base}`, token)
        await uploadThrough(`${server.origin}${base}`, token, `hono_upload_${++uploads}`)
        expect(await (await fetch(`${server.origin}/health`)).json()).toEqual({ ok: true })
      } finally {
        await server.close()
      }
    }, 120_000)
  }
})
