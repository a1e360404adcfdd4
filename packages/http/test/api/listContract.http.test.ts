import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { circomParts, createProof, createWebhook, type Harness, settled, uploadCircuit } from "../helpers.js"
import { eventually } from "@mzk/testkit"
import { makeDeliveringHarness } from "../support.js"

/**
 * Every paged list as its OpenAPI document describes it, against what the server does: the
 * document is read from the server, and each list found in it (a GET whose answer has `has_more`)
 * must document the paging parameters and say "newest first"; the server must then keep that
 * order across pages, accept every documented query parameter and refuse any other.
 */
let h: Harness
let doc: any
let key: string
const paths: Record<string, string> = {}

const FAKE_KEY = { protocol: "groth16", curve: "bn128", nPublic: 1 }

beforeAll(async () => {
  // Deliveries are attempted (every URL answers 200), so the delivery log has entries.
  h = await makeDeliveringHarness({})
  key = (await h.newAccount("Lists")).key
  doc = (await h.call("GET", "/api/v1/openapi.json")).json
  // Three of each listed thing, made one after another.
  const webhook = await createWebhook(h, key)
  await createWebhook(h, key)
  await createWebhook(h, key)
  for (let i = 0; i < 3; i++) {
    await h.call("POST", `/api/v1/webhooks/${webhook.id}/test`, { token: key })
    await h.call("POST", `/api/v1/webhooks/${webhook.id}/recover`, { token: key, body: { since: new Date(Date.now() - 60_000).toISOString() } })
    await createProof(h, key)
    await h.call("POST", "/api/v1/verification-keys", { token: key, body: { proving_system: "groth16", verification_key: FAKE_KEY, name: `k${i}` } })
    await uploadCircuit(h, key, circomParts("listed"))
    await settled(h, key, "listed")
  }
  paths["/api/v1/webhooks/{id}/deliveries"] = `/api/v1/webhooks/${webhook.id}/deliveries`
  await eventually(async () => (await h.call("GET", `${paths["/api/v1/webhooks/{id}/deliveries"]}`, { token: key })).json.deliveries.length >= 3 || undefined, 30_000, 20)
  paths["/api/v1/webhooks/{id}/recoveries"] = `/api/v1/webhooks/${webhook.id}/recoveries`
  paths["/api/v1/circuits/{name}/versions"] = "/api/v1/circuits/listed/versions"
}, 120_000)
afterAll(() => h.close())

/** The documented paged lists: the GETs whose 200 answer has `has_more`, with the array they page and their query parameters. */
const pagedLists = () => {
  const schemaOf = (ref: any): any => ref?.$ref === undefined ? ref : doc.components.schemas[ref.$ref.split("/").at(-1)]
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([template, methods]) => {
    const get = methods.get
    const body = schemaOf(get?.responses?.["200"]?.content?.["application/json"]?.schema)
    if (body?.properties?.has_more === undefined) return []
    const items = Object.keys(body.properties).find((name) => body.properties[name].type === "array")!
    const query = (get.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name as string)
    return [{ template, description: String(get.description ?? ""), items, query }]
  })
}

/** A listed item's id, its list's cursor. */
const idOf = (item: any): string => item.id ?? item.proof_id

/** The time an item of a list was made, or happened. */
const timeOf = (item: any): string => item.created_at ?? item.attempted_at ?? item.started_at

describe("every paged list, as documented", () => {
  it("documents limit, starting_after and ending_before, and says newest first", () => {
    const lists = pagedLists()
    expect(lists.map((l) => l.template)).toEqual(expect.arrayContaining([
      "/api/v1/webhooks",
      "/api/v1/proofs",
      "/api/v1/events",
      "/api/v1/audit-log",
      "/api/v1/verification-keys",
      "/api/v1/circuits/{name}/versions"
    ]))
    for (const list of lists) {
      expect(list.query, list.template).toEqual(expect.arrayContaining(["limit", "starting_after", "ending_before"]))
      expect(list.description, list.template).toMatch(/newest first/)
    }
  })

  it("pages newest first, takes each documented parameter and refuses an undocumented one", async () => {
    for (const list of pagedLists()) {
      const path = paths[list.template] ?? list.template
      const all = await h.call("GET", `${path}?limit=100`, { token: key })
      expect(all.status, list.template).toBe(200)
      const items: Array<any> = all.json[list.items]
      expect(items.length, `${list.template} holds at least 3`).toBeGreaterThanOrEqual(3)
      const times = items.map(timeOf)
      expect(times, list.template).toEqual([...times].sort().reverse())

      // Page by page with limit=1, then back: the same items in the same order.
      const forward: Array<string> = []
      let after: string | undefined
      for (let i = 0; i < 3; i++) {
        const page = await h.call("GET", `${path}?limit=1${after === undefined ? "" : `&starting_after=${after}`}`, { token: key })
        expect([page.status, page.json.has_more], `${list.template} page ${i}`).toEqual([200, i < 2 || items.length > 3])
        after = idOf(page.json[list.items][0])
        forward.push(after!)
      }
      expect(forward, list.template).toEqual(items.slice(0, 3).map(idOf))
      const back = await h.call("GET", `${path}?limit=2&ending_before=${forward[2]}`, { token: key })
      expect(back.json[list.items].map(idOf), list.template).toEqual(forward.slice(0, 2))

      for (const name of list.query) {
        const reply = await h.call("GET", `${path}?${name}=${name === "limit" ? "2" : "x"}`, { token: key })
        // A bad value may be refused; the parameter itself is known.
        if (reply.status === 400) expect(reply.json.error.message, `${list.template} ${name}`).not.toMatch(/unknown|not a parameter/i)
      }
      const unknown = await h.call("GET", `${path}?nonsense=1`, { token: key })
      expect(unknown.status, list.template).toBe(400)
      expect(JSON.stringify(unknown.json.error), list.template).toContain("nonsense")
    }
  })
})
