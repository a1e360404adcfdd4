import { KeysRepo, SessionAuthenticator, StorageError } from "@mzk/core"
import { SqliteMemoryStore, testCore } from "@mzk/testkit"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectEnvelope, harnessOver, makeHarness } from "../support.js"

const SECRET_DETAIL = "disk /var/lib/mzk on fire at sector 7"

/** The memory store, except that listing keys fails the way a lost database connection does. */
const StoreLosingKeys = Layer.map(SqliteMemoryStore, (context) => {
  const keys = Context.get(context, KeysRepo)
  return Context.add(context, KeysRepo, {
    ...keys,
    listActive: () => Effect.fail(new StorageError({ message: SECRET_DETAIL, cause: new Error(SECRET_DETAIL) }))
  })
})

describe("failures the client cannot fix, over a real port", () => {
  describe("storage unavailable", () => {
    let h: Awaited<ReturnType<typeof makeHarness>>
    beforeAll(async () => {
      h = await harnessOver(ManagedRuntime.make(testCore(StoreLosingKeys)))
    })
    afterAll(() => h.close())

    it("is 503 service_unavailable, and the cause stays inside", async () => {
      const { key } = await h.newAccount()
      const reply = await h.call("GET", "/api/v1/keys", { token: key })
      expectEnvelope(reply, 503, "service_unavailable")
      expect(reply.text).not.toContain("fire")
      // Everything that does not touch the failing query still works.
      expect((await h.call("GET", "/api/v1/webhooks", { token: key })).status).toBe(200)
    })
  })

  // A session check may die inside its Effect, or throw before it returns one.
  const defects = {
    "a defect in the embedding application's session check": () => Effect.die(new Error(SECRET_DETAIL)),
    "an exception thrown by the embedding application's session check": (): never => {
      throw new Error(SECRET_DETAIL)
    }
  }
  for (const [name, authenticate] of Object.entries(defects)) {
    describe(name, () => {
      let h: Awaited<ReturnType<typeof makeHarness>>
      beforeAll(async () => {
        h = await makeHarness(Layer.succeed(SessionAuthenticator, { authenticate }))
      })
      afterAll(() => h.close())

      it("is 500 internal_error with no internals, and the server goes on serving", async () => {
        const reply = await h.call("GET", "/api/v1/keys", { token: "sess_whatever" })
        expectEnvelope(reply, 500, "internal_error")
        expect(reply.text).not.toContain("fire")
        expect(reply.text).not.toMatch(/at .*\.ts:\d+/)
        const { key } = await h.newAccount()
        expect((await h.call("GET", "/api/v1/keys", { token: key })).status).toBe(200)
      })
    })
  }
})
