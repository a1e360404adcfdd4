import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describe } from "vitest"
import { describePostgres, expectRefused, serverWithKey, STORES } from "../bothStores.js"

type Call = Effect.Effect.Success<ReturnType<typeof serverWithKey>>["call"]

const idsOf = (page: Record<string, unknown>, array: string, idField: string) =>
  (page[array] as Array<Record<string, string>>).map((item) => item[idField]!)

/**
 * Walks one list both ways two items at a time, as Stripe's lists page: forward from the newest
 * with `starting_after` the last id seen, then back from the oldest with `ending_before` the first
 * id seen. Both walks must give the whole list (read at once), newest first, with its `total` on
 * every page. Returns the whole list's ids.
 */
const walk = (call: Call, path: string, array: string, idField = "id") =>
  Effect.gen(function*() {
    const at = (query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`
    const whole = yield* call("GET", at("limit=100"))
    expect(whole.status).toBe(200)
    const ids = idsOf(whole.json, array, idField)
    expect(ids.length).toBeGreaterThanOrEqual(5)
    // Newest first: ids begin with their creation time.
    expect(ids).toEqual([...ids].sort().reverse())

    const forward: Array<string> = []
    let cursor: string | undefined
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(ids.length)
      const page = yield* call("GET", at(`limit=2${cursor === undefined ? "" : `&starting_after=${cursor}`}`))
      expect(page.status).toBe(200)
      expect(page.json.total).toBe(ids.length)
      const seen = idsOf(page.json, array, idField)
      forward.push(...seen)
      if (!page.json.has_more) break
      cursor = seen.at(-1)
    }
    expect(forward).toEqual(ids)

    const backward: Array<string> = []
    cursor = ids.at(-1)
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(ids.length)
      const page = yield* call("GET", at(`limit=2&ending_before=${cursor}`))
      expect(page.status).toBe(200)
      expect(page.json.total).toBe(ids.length)
      const seen = idsOf(page.json, array, idField)
      // The page just before the cursor, still newest first.
      expect(seen).toEqual(ids.slice(Math.max(0, ids.indexOf(cursor!) - 2), ids.indexOf(cursor!)))
      backward.unshift(...seen)
      if (!page.json.has_more) break
      cursor = seen[0]
    }
    expect(backward).toEqual(ids.slice(0, -1))
    // Before the newest there is nothing.
    expect((yield* call("GET", at(`ending_before=${ids[0]}`))).json).toMatchObject({ [array]: [], total: ids.length, has_more: false })
    return ids
  })

const lists = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    const webhooks: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const made = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.created"], description: `n${i}` })
      expect(made.status).toBe(201)
      webhooks.push(made.json.id)
    }
    const keys: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const made = yield* call("POST", "/api/v1/keys", { name: `k${i}` })
      expect(made.status).toBe(201)
      keys.push(made.json.id)
    }
    const proofs: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const made = yield* call("POST", "/api/v1/proofs", { type: "multiplier", inputs: { a: 3, b: String(i + 1) } })
      expect(made.status).toBe(202)
      proofs.push(made.json.proof_id)
    }
    const recoveries: Array<string> = []
    for (let i = 0; i < 5; i++) {
      const made = yield* call("POST", `/api/v1/webhooks/${webhooks[0]}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() })
      expect(made.status).toBe(202)
      recoveries.push(made.json.id)
    }

    expect(yield* walk(call, "/api/v1/webhooks", "webhooks")).toEqual([...webhooks].reverse())
    // Proofs were listed oldest first before: now newest first, as every list.
    expect(yield* walk(call, "/api/v1/proofs", "proofs", "proof_id")).toEqual([...proofs].reverse())
    expect(yield* walk(call, "/api/v1/proofs?status=queued", "proofs", "proof_id")).toEqual([...proofs].reverse())
    expect(yield* walk(call, `/api/v1/webhooks/${webhooks[0]}/recoveries`, "recoveries")).toEqual([...recoveries].reverse())
    const events = yield* walk(call, "/api/v1/events?type=key.created", "events")
    // The bootstrap key's and the five made here.
    expect(events).toHaveLength(6)
    yield* walk(call, "/api/v1/audit-log", "entries")
    // The key list is not paged (an account holds at most 10 active keys) but is newest first too.
    const keyList = yield* call("GET", "/api/v1/keys")
    expect(idsOf(keyList.json, "keys", "id").slice(0, 5)).toEqual([...keys].reverse())

    const audit = yield* call("GET", "/api/v1/audit-log?limit=2")
    const cursors: ReadonlyArray<readonly [string, string, string]> = [
      ["/api/v1/webhooks", webhooks[2]!, webhooks[1]!],
      ["/api/v1/proofs", proofs[2]!, proofs[1]!],
      ["/api/v1/events", events[1]!, events[0]!],
      ["/api/v1/audit-log", audit.json.entries[1].id, audit.json.entries[0].id],
      [`/api/v1/webhooks/${webhooks[0]}/deliveries`, `att_${"1".repeat(26)}`, `att_${"0".repeat(26)}`],
      [`/api/v1/webhooks/${webhooks[0]}/recoveries`, recoveries[2]!, recoveries[1]!]
    ]
    for (const [list, after, before] of cursors) {
      // One cursor at a time.
      const both = yield* call("GET", `${list}?starting_after=${after}&ending_before=${before}`)
      expectRefused(`${list} with both cursors`, both, "ending_before")
      expect(both.json.error.message).toContain("cannot be sent with starting_after")
      // A malformed ending_before is refused as starting_after is.
      expectRefused(`${list}?ending_before=garbage`, yield* call("GET", `${list}?ending_before=garbage`), "ending_before")
      // An id with the list's prefix but not of an issued id's shape: the message says what an id is, not only its prefix.
      const prefix = after.slice(0, after.indexOf("_") + 1)
      const lookalike = yield* call("GET", `${list}?starting_after=${prefix}nonexistent`)
      expectRefused(`${list}?starting_after=${prefix}nonexistent`, lookalike, "starting_after")
      expect(lookalike.json.error.details[0].message).toContain(`"${prefix}" and 26 lowercase letters and digits`)
      // An unknown query parameter is named, not ignored.
      const unknown = yield* call("GET", `${list}?limit=1&foo=bar`)
      expectRefused(`${list}?foo=bar`, unknown, "foo")
      expect(unknown.json.error.details).toHaveLength(1)
      expect(unknown.json.error.details[0].message).toContain("limit, starting_after, ending_before")
    }

    // Endpoints without a query schema take no parameters at all.
    const onKeys = yield* call("GET", "/api/v1/keys?starting_after=x")
    expectRefused("/keys?starting_after", onKeys, "starting_after")
    expect(onKeys.json.error.details[0].message).toBe("this endpoint takes no query parameters")
    expectRefused("POST /proofs?foo", yield* call("POST", "/api/v1/proofs?foo=1", { type: "multiplier", inputs: { a: 3, b: 4 } }), "foo")
    // Every unknown parameter is named, and none that is declared.
    const several = yield* call("GET", "/api/v1/proofs?stauts=failed&limit=2&sort=asc")
    expectRefused("several unknown", several, "stauts")
    expect(several.json.error.details.map((d: { path: string }) => d.path)).toEqual(["stauts", "sort"])
    // Names of Object.prototype's are parameters like any other: `__proto__` was dropped unseen, and the list answered unfiltered.
    for (const name of ["__proto__", "constructor", "toString"]) {
      expectRefused(`?${name}`, yield* call("GET", `/api/v1/proofs?${name}=x`), name)
      expectRefused(`/keys?${name}`, yield* call("GET", `/api/v1/keys?${name}=x`), name)
    }

    // A value outside a choice: one clause listing the allowed values, whole.
    const bogus = yield* call("GET", "/api/v1/proofs?status=bogus")
    expectRefused("?status=bogus", bogus, "status")
    expect(bogus.json.error.details).toEqual([{ path: "status", message: "must be one of: queued, running, completed, failed, canceled, expired" }])
    expect(bogus.json.error.message).toBe("Invalid request: status: must be one of: queued, running, completed, failed, canceled, expired")
    const badType = yield* call("GET", "/api/v1/events?type=bogus")
    expectRefused("?type=bogus", badType, "type")
    expect(badType.json.error.details).toHaveLength(1)
    const allowed: string = badType.json.error.details[0].message
    expect(allowed).toMatch(/^must be one of: proof\.completed, .*webhook\.test$/)
    expect(allowed).not.toContain("…")
  })

describe("lists over a real port: newest first, paged both ways, unknown parameters refused", () => {
  it.scopedLive("SQLite", () => lists(STORES[0]![1]), 60_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres", () => lists(STORES[1]![1]), 60_000)
  })
})
