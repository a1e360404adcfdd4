import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describe } from "vitest"
import { expectRefused, serverWithKey, STORES } from "../bothStores.js"

describe("webhook URLs, over a real port", () => {
  it.scopedLive("port 0 is refused at create and update with 400 naming url; a URL is stored and returned as sent", () =>
    Effect.gen(function*() {
      const { call } = yield* serverWithKey(STORES[0]![1])
      const created = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.created"] })
      expect(created.status).toBe(201)
      // Port 0 names no port a receiver can listen on: every delivery would fail.
      for (const url of ["http://127.0.0.1:0/hook", "http://127.0.0.1:00/hook", "https://93.184.216.34:0/hook"]) {
        expectRefused(`create ${url}`, yield* call("POST", "/api/v1/webhooks", { url, events: ["key.created"] }), "url")
        expectRefused(`update ${url}`, yield* call("PATCH", `/api/v1/webhooks/${created.json.id}`, { url }), "url")
      }
      // Not normalised: what the client sent is what it reads back (delivery uses the equivalent parsed form).
      const asTyped = "HTTP://127.0.0.1:80/a/../hook?x=1#frag"
      const typed = yield* call("POST", "/api/v1/webhooks", { url: asTyped, events: ["key.created"] })
      expect(typed.status).toBe(201)
      expect(typed.json.url).toBe(asTyped)
      expect((yield* call("GET", `/api/v1/webhooks/${typed.json.id}`)).json.url).toBe(asTyped)
    }), 30_000)
})
