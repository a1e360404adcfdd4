import Fastify, { type FastifyInstance } from "fastify"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createMzk, type Mzk } from "../../src/createMzk.js"
import { proveThrough, uploadThrough } from "./embedded.js"

let mzk: Mzk
let token: string
beforeAll(async () => {
  mzk = await createMzk({ database: "sqlite::memory:" })
  await mzk.start()
  token = (await mzk.createAccount({ name: "Fastify app" })).api_key
})
afterAll(() => mzk.stop())

/** The app with its own route, and mzk mounted by `mount`; its origin once listening. */
const serve = async (mount: (app: FastifyInstance) => Promise<void>) => {
  const app = Fastify()
  app.get("/health", async () => ({ ok: true }))
  await mount(app)
  await app.listen({ port: 0, host: "127.0.0.1" })
  return { app, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` }
}

/**
 * The recommended mount: an encapsulated plugin whose requests Fastify hands on unparsed (its
 * parsers replaced by one that reads nothing), so mzk reads JSON bodies and streams uploads itself,
 * with its own limits and error envelopes; the rest of the app keeps Fastify's parsers.
 */
const mountUnparsed = (prefix: string) => async (app: FastifyInstance) => {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null))
    scope.all("/api/v1/*", (request, reply) => {
      reply.hijack()
      mzk.handler(request.raw, reply.raw)
    })
  }, { prefix })
}

describe("createMzk's handler in Fastify", () => {
  for (const prefix of ["", "/mzk"]) {
    it(`in a plugin that leaves bodies to mzk${prefix === "" ? "" : `, under the prefix ${prefix}`}`, async () => {
      const { app, origin } = await serve(mountUnparsed(prefix))
      try {
        await proveThrough(`${origin}${prefix}`, token)
        await uploadThrough(`${origin}${prefix}`, token, `fastify_upload${prefix.replace("/", "_")}`)
        expect(await (await fetch(`${origin}/health`)).json()).toEqual({ ok: true })
      } finally {
        await app.close()
      }
    }, 120_000)
  }

  it("with Fastify's default JSON parser, handing mzk the parsed body on the raw request", async () => {
    const { app, origin } = await serve(async (app) => {
      // Fastify refuses media types it has no parser for: uploads pass through unread.
      app.addContentTypeParser("multipart/form-data", (_request, _payload, done) => done(null))
      app.all("/api/v1/*", (request, reply) => {
        reply.hijack()
        mzk.handler(Object.assign(request.raw, { body: request.body }), reply.raw)
      })
    })
    try {
      await proveThrough(origin, token, { a: 5, b: 7 })
      await uploadThrough(origin, token, "fastify_upload_parsed")
    } finally {
      await app.close()
    }
  }, 120_000)
})
