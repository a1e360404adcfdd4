import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describe } from "vitest"
import { describePostgres, expectRefused, serverWithKey, STORES } from "../bothStores.js"

/**
 * `starting_after` must be an id of the listed kind. A NUL in it reached Postgres, which cannot
 * hold one, and came back as 503 "retry later"; SQLite answered 200. Both now answer 400.
 */
const cursors = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    const hook = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.created"] })
    expect(hook.status).toBe(201)
    const webhook = hook.json.id as string

    for (const list of ["/api/v1/webhooks", "/api/v1/proofs", `/api/v1/webhooks/${webhook}/deliveries`]) {
      for (const cursor of ["%00", "%00%ff%fe", "wh_%00", "garbage", "", "proof_zz", `del_${"0".repeat(26)}`, `key_${"0".repeat(26)}`]) {
        expectRefused(`${list}?starting_after=${cursor}`, yield* call("GET", `${list}?starting_after=${cursor}`), "starting_after")
      }
    }
    // A well-formed cursor of the listed kind that matches nothing keeps today's behaviour:
    // the items after that position (newest first, so older ones).
    const before = yield* call("GET", `/api/v1/webhooks?starting_after=wh_${"z".repeat(26)}`)
    expect(before.status).toBe(200)
    expect(before.json.webhooks.map((w: { id: string }) => w.id)).toEqual([webhook])
    expect((yield* call("GET", `/api/v1/webhooks?starting_after=${webhook}`)).json).toMatchObject({ webhooks: [], total: 1, has_more: false })
    expect((yield* call("GET", `/api/v1/proofs?starting_after=proof_${"0".repeat(26)}`)).json).toMatchObject({ proofs: [], has_more: false })
    const attempts = yield* call("GET", `/api/v1/webhooks/${webhook}/deliveries?starting_after=att_${"0".repeat(26)}`)
    expect(attempts.status).toBe(200)
    expect(attempts.json).toMatchObject({ deliveries: [], has_more: false })
  })

describe("list cursors over a real port", () => {
  it.scopedLive("SQLite: a malformed starting_after is 400 invalid_request naming starting_after", () => cursors(STORES[0]![1]), 30_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres: a malformed starting_after (NUL included) is 400 invalid_request, not 503", () => cursors(STORES[1]![1]), 30_000)
  })
})
