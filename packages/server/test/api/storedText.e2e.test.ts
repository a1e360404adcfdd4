import { expect, it } from "@effect/vitest"
import { openApiDocument } from "@mzk/http"
import { Effect } from "effect"
import { describe } from "vitest"
import { describePostgres, expectRefused, type Reply, serverWithKey, STORES } from "../bothStores.js"

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


/** A string no store keeps: a NUL (Postgres `text` refuses it) and lone UTF-16 surrogates (not Unicode text; no UTF-8 encodes them). */
const UNSTORABLE = ["a\u0000b", "a\ud800b", "\udc00"] as const

type JsonSchema = { readonly [key: string]: any }
type Path = ReadonlyArray<string | number>

/**
 * Every place a string can stand in a request body described by `schema` (the published OpenAPI
 * document's), as its path: each property, an array's first item, a record's values under the key
 * `k`; `records` gets the path of every record, whose keys are strings too.
 */
const textPaths = (document: JsonSchema, schema: JsonSchema, at: Path = [], records: Array<Path> = [], refs: ReadonlySet<string> = new Set()): Array<Path> => {
  if (typeof schema.$ref === "string") {
    if (refs.has(schema.$ref)) return []
    const name = schema.$ref.replace("#/components/schemas/", "")
    return textPaths(document, { ...document.components.schemas[name], ...schema, $ref: undefined }, at, records, new Set([...refs, schema.$ref]))
  }
  const found: Array<Path> = []
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) found.push(...textPaths(document, member, at, records, refs))
  if ((schema.type === "string" && schema.format !== "binary") || (Array.isArray(schema.enum) && schema.enum.some((v: unknown) => typeof v === "string"))) found.push(at)
  for (const [name, property] of Object.entries(schema.properties ?? {})) found.push(...textPaths(document, property as JsonSchema, [...at, name], records, refs))
  if (typeof schema.additionalProperties === "object") {
    records.push(at)
    found.push(...textPaths(document, schema.additionalProperties, [...at, "k"], records, refs))
  }
  if (typeof schema.items === "object") found.push(...textPaths(document, schema.items, [...at, 0], records, refs))
  return found
}

/** `{ a: [ { b: value } ] }` for the path `a.0.b`: the one field, nothing else of the body. */
const bodyWith = (path: Path, value: unknown): unknown =>
  path.length === 0 ? value : typeof path[0] === "number" ? [bodyWith(path.slice(1), value)] : { [path[0]!]: bodyWith(path.slice(1), value) }

const unique = (paths: ReadonlyArray<Path>) => [...new Map(paths.map((p) => [p.join("."), p])).values()]

/** Each JSON body of the API, and each text field of the upload form, with `[method, path, body paths, record paths]`. */
const jsonBodies = (() => {
  const document = JSON.parse(JSON.stringify(openApiDocument)) as JsonSchema
  const found: Array<{ method: string; route: string; texts: ReadonlyArray<Path>; records: ReadonlyArray<Path> }> = []
  for (const [route, operations] of Object.entries(document.paths as Record<string, Record<string, JsonSchema>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const schema = operation.requestBody?.content?.["application/json"]?.schema
      if (schema === undefined) continue
      const records: Array<Path> = []
      found.push({ method: method.toUpperCase(), route: route.replace(/\{\w+\}/g, "x"), texts: unique(textPaths(document, schema, [], records)), records: unique(records) })
    }
  }
  return found
})()

/**
 * Every text field of every JSON body of the API, and each key of its records, holding text no
 * store keeps: a 400 naming the field on both stores. Postgres answered a NUL in a proof's `type`
 * with 503 and a lone surrogate in metadata with 503 (its JSON refuses one), and kept a lone
 * surrogate in a description as U+FFFD (not what was sent), where SQLite kept each as sent.
 */
const everyBody = (database: (typeof STORES)[number][1]) =>
  Effect.gen(function*() {
    const { baseUrl, call, key } = yield* serverWithKey(database)
    const wrong: Array<string> = []
    let asked = 0
    const check = (what: string, reply: Reply, path: string) => {
      asked++
      try {
        expectRefused(what, reply, path)
      } catch (error) {
        wrong.push((error as Error).message)
      }
    }
    for (const { method, records, route, texts } of jsonBodies) {
      for (const bad of UNSTORABLE) {
        for (const path of texts) {
          check(`${method} ${route} ${path.join(".")}: ${JSON.stringify(bad)}`, yield* call(method, route, bodyWith(path, bad)), path.join("."))
        }
        for (const path of records) {
          const named = [...path, bad]
          check(`${method} ${route} a key ${JSON.stringify(bad)} of ${path.join(".")}`, yield* call(method, route, bodyWith(named, "v")), named.join("."))
        }
      }
    }
    // The upload's form: a NUL in each text field, and what its metadata (JSON in a field) may hold.
    const upload = (fields: ReadonlyArray<readonly [string, string]>) =>
      Effect.promise(async (): Promise<Reply> => {
        const form = new FormData()
        for (const [name, value] of fields) form.append(name, value)
        const response = await fetch(`${baseUrl}/api/v1/circuits`, { method: "POST", body: form, headers: { authorization: `Bearer ${key}` } })
        return { status: response.status, requestId: response.headers.get("request-id"), json: await response.json() }
      })
    for (const field of ["name", "description", "main", "proving_system"]) {
      const named = field === "name" ? [] : [["name", "walked"] as const]
      check(`upload ${field} with a NUL`, yield* upload([...named, [field, "a\u0000b"]]), field)
    }
    for (const bad of UNSTORABLE) {
      const metadata = [["name", "walked"], ["main", "main.circom"]] as const
      check(`upload metadata value ${JSON.stringify(bad)}`, yield* upload([...metadata, ["metadata", JSON.stringify({ k: bad })]]), "metadata.k")
      check(`upload metadata key ${JSON.stringify(bad)}`, yield* upload([...metadata, ["metadata", JSON.stringify({ [bad]: "v" })]]), `metadata.${bad}`)
    }
    // Every refusal at once, so a failure lists each field that answers otherwise.
    expect(wrong).toEqual([])
    // The walk reached the API's bodies: 11 of them, and their fields nested in arrays and records.
    expect(jsonBodies.length).toBeGreaterThan(9)
    expect(jsonBodies.some(({ texts }) => texts.some((path) => path.join(".") === "proofs.0.metadata.k"))).toBe(true)
    expect(asked).toBeGreaterThan(3 * 40)
    // A URL cannot carry a lone surrogate: its percent-encoded bytes (CESU-8) decode as U+FFFD, which every store keeps.
    const filtered = yield* call("GET", "/api/v1/proofs?metadata[k]=%ED%A0%80")
    expect([filtered.status, filtered.json.total]).toEqual([200, 0])
    // Nothing refused was stored.
    expect((yield* call("GET", "/api/v1/proofs")).json.total).toBe(0)
    expect((yield* call("GET", "/api/v1/keys")).json.keys.map((k: { name: string }) => k.name)).toEqual(["k"])
    expect((yield* call("GET", "/api/v1/webhooks")).json.webhooks).toEqual([])
  })

describe("text that reaches storage, over a real port", () => {
  it.scopedLive("SQLite: NUL in a description, a control character in a URL, is 400 naming the field", () => storedText(STORES[0]![1]), 30_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres: NUL in a description or a URL is 400 naming the field, not 503", () => storedText(STORES[1]![1]), 30_000)
  })
})

describe("text no store keeps, in every field of every request body, over a real port", () => {
  it.scopedLive("SQLite: a NUL or a lone surrogate in any body field or record key is 400 naming it", () => everyBody(STORES[0]![1]), 120_000)
  describePostgres("Postgres", () => {
    it.scopedLive("Postgres: a NUL or a lone surrogate in any body field or record key is 400 naming it, never 503 or a changed value", () => everyBody(STORES[1]![1]), 120_000)
  })
})
