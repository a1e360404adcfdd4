import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describe } from "vitest"
import { describePostgres, expectRefused, serverWithKey, STORES } from "./bothStores.js"

/**
 * Text that SQLite stores and Postgres cannot (a NUL character) must get the same answer on both
 * stores: a 400 naming the field, never a 503 that a client following retry semantics repeats
 * forever. URLs refuse every control character.
 */
const storedText = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    const hook = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.created"] })
    expect(hook.status).toBe(201)
    const webhook = hook.json.id as string

    expectRefused("key description", yield* call("POST", "/api/v1/keys", { name: "nul", description: "nul\u0000byte" }), "description")
    expectRefused("webhook description", yield* call("POST", "/api/v1/webhooks", {
      url: "http://127.0.0.1:9/hook",
      events: ["key.created"],
      description: "nul\u0000byte"
    }), "description")
    expectRefused("PATCH description", yield* call("PATCH", `/api/v1/webhooks/${webhook}`, { description: "nul\u0000byte" }), "description")
    const urls = ["http://127.0.0.1:9/ho\u0000ok", "http://127.0.0.1:9/hook\u0000", "http://127.0.0.1:9/a\u0001b", "http://127.0.0.1:9/a\tb", "http://127.0.0.1:9/a\nb", "http://127.0.0.1:9/a\u007fb", "http://127.0.0.1:9/a\u0085b"]
    for (const url of urls) {
      expectRefused(`webhook url ${JSON.stringify(url)}`, yield* call("POST", "/api/v1/webhooks", { url, events: ["key.created"] }), "url")
      expectRefused(`PATCH url ${JSON.stringify(url)}`, yield* call("PATCH", `/api/v1/webhooks/${webhook}`, { url }), "url")
    }

    // Text both stores keep is accepted as before: line breaks, tabs, other scripts.
    const multiline = "line one\nline two\ttabbed, ünïcödé, 証明"
    const described = yield* call("POST", "/api/v1/keys", { name: "multiline", description: multiline })
    expect(described.status).toBe(201)
    expect(described.json.description).toBe(multiline)
    const patched = yield* call("PATCH", `/api/v1/webhooks/${webhook}`, { description: multiline })
    expect(patched.status).toBe(200)
    expect(patched.json.description).toBe(multiline)
    // Nothing refused was stored.
    expect((yield* call("GET", "/api/v1/keys")).json.keys.map((k: { name: string }) => k.name).sort()).toEqual(["k", "multiline"])
    expect((yield* call("GET", "/api/v1/webhooks")).json.webhooks.map((w: { url: string }) => w.url)).toEqual(["http://127.0.0.1:9/hook"])
  })

describe("text that reaches storage, over a real port", () => {
  it.scopedLive("SQLite: NUL in a description, a control character in a URL, is 400 naming the field", () => storedText(STORES[0]![1]), 30_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres: NUL in a description or a URL is 400 naming the field, not 503", () => storedText(STORES[1]![1]), 30_000)
  })
})
