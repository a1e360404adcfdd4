import { expect, it } from "@effect/vitest"
import { HttpApi, type HttpApiEndpoint } from "@effect/platform"
import { MzkApi } from "@mzk/http"
import { Effect, Option, SchemaAST as AST } from "effect"
import { describe } from "vitest"
import { describePostgres, expectRefused, serverWithKey, STORES } from "../bothStores.js"

/** The fields of `ast` (a request body or query) that take a timestamp, by their path. */
const timestampFields = (ast: AST.AST, at: string): Array<string> => {
  // The brand survives re-annotation (a field's own description), where an identifier does not.
  if (Option.getOrElse(AST.getBrandAnnotation(ast), (): ReadonlyArray<string | symbol> => []).includes("Timestamp")) return [at]
  switch (ast._tag) {
    case "Refinement":
      return timestampFields(ast.from, at)
    case "Transformation":
      return timestampFields(ast.to, at)
    case "Suspend":
      return timestampFields(ast.f(), at)
    case "Union":
      return [...new Set(ast.types.flatMap((type) => timestampFields(type, at)))]
    case "TypeLiteral":
      return ast.propertySignatures.flatMap((p) => timestampFields(p.type, at === "" ? String(p.name) : `${at}.${String(p.name)}`))
    default:
      return []
  }
}

/** Every timestamp the API takes, as `METHOD path field`, read from its definition. */
const timestampInputs = () => {
  const found: Array<string> = []
  HttpApi.reflect(MzkApi, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint }) => {
      const e = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      for (const schema of [e.payloadSchema, e.urlParamsSchema]) {
        if (Option.isSome(schema)) found.push(...timestampFields(schema.value.ast, "").map((field) => `${e.method} ${e.path} ${field}`))
      }
    }
  })
  return found.sort()
}

/** Of the documented form (ISO 8601 UTC with milliseconds), but no real date and time. */
const IMPOSSIBLE = [
  "2030-02-30T00:00:00.000Z", // February 30
  "2029-02-29T00:00:00.000Z", // February 29 of a common year
  "2030-04-31T00:00:00.000Z", // April 31
  "2030-13-01T00:00:00.000Z", // month 13
  "2030-00-10T00:00:00.000Z", // month 0
  "2030-01-00T00:00:00.000Z", // day 0
  "2030-01-01T24:00:00.000Z", // hour 24
  "2030-01-01T00:60:00.000Z", // minute 60
  "2030-01-01T00:00:60.000Z" // second 60 (a leap second is not a time UTC timestamps here can hold)
]

const timestamps = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { call } = yield* serverWithKey(database)
    const hook = yield* call("POST", "/api/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["key.created"], active: false })
    expect(hook.status).toBe(201)
    const webhook = hook.json.id as string
    const rolled = yield* call("POST", "/api/v1/keys", { name: "rolling" })
    expect(rolled.status).toBe(201)

    // Each timestamp the API takes, in a request otherwise valid.
    const cases: Record<string, (at: string) => Effect.Effect<Parameters<typeof expectRefused>[1]>> = {
      "POST /api/v1/keys expires_at": (at) => call("POST", "/api/v1/keys", { name: "expiring", expires_at: at }),
      "POST /api/v1/keys/:id/roll expires_at": (at) => call("POST", `/api/v1/keys/${rolled.json.id}/roll`, { expires_at: at }),
      "PATCH /api/v1/webhooks/:id recover_since": (at) => call("PATCH", `/api/v1/webhooks/${webhook}`, { active: true, recover_since: at }),
      "POST /api/v1/webhooks/:id/recover since": (at) => call("POST", `/api/v1/webhooks/${webhook}/recover`, { since: at }),
      "GET /api/v1/events created_gte": (at) => call("GET", `/api/v1/events?created_gte=${encodeURIComponent(at)}`),
      "GET /api/v1/events created_lt": (at) => call("GET", `/api/v1/events?created_lt=${encodeURIComponent(at)}`)
    }
    // Every timestamp of the API definition is among them (a new one fails here until it is added).
    expect(timestampInputs()).toEqual(Object.keys(cases).sort())

    for (const input of timestampInputs()) {
      const field = input.split(" ")[2]!
      for (const at of IMPOSSIBLE) expectRefused(`${input} = ${at}`, yield* cases[input]!(at), field)
    }

    // Real dates and times are taken as before, February 29 of a leap year included.
    const leap = yield* call("POST", "/api/v1/keys", { name: "leap", expires_at: "2032-02-29T23:59:59.999Z" })
    expect([leap.status, leap.json.expires_at]).toEqual([201, "2032-02-29T23:59:59.999Z"])
    expect((yield* call("GET", `/api/v1/events?created_gte=2024-02-29T00:00:00.000Z&created_lt=2030-12-31T23:59:59.999Z`)).status).toBe(200)
    // Nothing refused was stored or changed.
    expect((yield* call("GET", "/api/v1/keys")).json.keys.map((k: { name: string }) => k.name).sort()).toEqual(["k", "leap", "rolling"])
    // The key a refused roll named was not rolled: it rolls now, once.
    expect((yield* call("POST", `/api/v1/keys/${rolled.json.id}/roll`, {})).status).toBe(201)
    expect((yield* call("GET", `/api/v1/webhooks/${webhook}`)).json.active).toBe(false)
    expect((yield* call("GET", `/api/v1/webhooks/${webhook}/recoveries`)).json.recoveries).toEqual([])
  })

describe("impossible timestamps, over a real port", () => {
  it.scopedLive("SQLite: every timestamp the API takes refuses a date or time that does not exist, 400 naming the field", () => timestamps(STORES[0]![1]), 60_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres: every timestamp the API takes refuses a date or time that does not exist, 400 naming the field", () => timestamps(STORES[1]![1]), 60_000)
  })
})
