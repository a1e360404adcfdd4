import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, Multipart } from "@effect/platform"
import {
  Authentication,
  compileApi,
  idempotent,
  makeDispatcherFor,
  metered,
  MeteredEndpoint,
  MzkApi,
  MzkHandlers,
  RateLimitExceededWire,
  requires,
  UnservableApi,
  StagedFile,
  UploadedFile,
  UploadTooLargeWire
} from "@mzk/http"
import { testCore } from "@mzk/testkit"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"

class Tracing extends HttpApiMiddleware.Tag<Tracing>()("test/Tracing") {}

const ok = () => Effect.succeed({ ok: true })
const Ok = Schema.Struct({ ok: Schema.Boolean })

/** A one-endpoint API around `endpoint`, with a handler for it. */
const apiWith = (endpoint: HttpApiEndpoint.HttpApiEndpoint.Any, group: unknown = HttpApiGroup.make("things")) => {
  const things = group as HttpApiGroup.HttpApiGroup.AnyWithProps
  const api = HttpApi.make("test").add(things.add(endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps))
  const name = (endpoint as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps).name
  return { api, implementations: [{ group: "things", handlers: { [name]: ok } }] }
}

const refusal = (api: HttpApi.HttpApi.Any, implementations: Parameters<typeof compileApi>[1]) => {
  try {
    compileApi(api, implementations)
  } catch (error) {
    expect(error).toBeInstanceOf(UnservableApi)
    return (error as Error).message
  }
  throw new Error("the API compiled")
}

describe("compiling an API for the dispatcher", () => {
  it("serves MzkApi with its handlers: every endpoint, each with its scope and metering", async () => {
    const implementations = await Effect.runPromise(Effect.provide(MzkHandlers, testCore()))
    const { endpoints } = compileApi(MzkApi, implementations)
    const table = Object.fromEntries(endpoints.map((e) => [e.name, [e.scope ?? "-", e.metered ? "metered" : "-"]]))
    expect(table).toEqual({
      "keys.create": ["keys:write", "-"],
      "keys.list": ["keys:read", "-"],
      "keys.revoke": ["keys:write", "-"],
      "keys.roll": ["keys:write", "-"],
      "webhooks.create": ["webhooks:write", "-"],
      "webhooks.list": ["webhooks:read", "-"],
      "webhooks.get": ["webhooks:read", "-"],
      "webhooks.update": ["webhooks:write", "-"],
      "webhooks.remove": ["webhooks:write", "-"],
      "webhooks.deliveries": ["webhooks:read", "-"],
      "webhooks.delivery": ["webhooks:read", "-"],
      "webhooks.test": ["webhooks:write", "-"],
      "webhooks.retryDelivery": ["webhooks:write", "-"],
      "webhooks.recover": ["webhooks:write", "-"],
      "webhooks.recoveries": ["webhooks:read", "-"],
      "webhooks.recovery": ["webhooks:read", "-"],
      "webhooks.rotateSecret": ["webhooks:write", "-"],
      "proofs.create": ["proofs:write", "metered"],
      "proofs.createBatch": ["proofs:write", "metered"],
      "proofs.list": ["proofs:read", "-"],
      "proofs.get": ["proofs:read", "-"],
      "proofs.verify": ["proofs:read", "metered"],
      "proofs.calldata": ["proofs:read", "-"],
      "proofs.cancel": ["proofs:write", "-"],
      "proofs.cancelBatch": ["proofs:write", "-"],
      "circuits.create": ["circuits:write", "-"],
      "circuits.artifact": ["circuits:read", "-"],
      "circuits.list": ["circuits:read", "-"],
      "circuits.get": ["circuits:read", "-"],
      "circuits.versions": ["circuits:read", "-"],
      "circuits.remove": ["circuits:write", "-"],
      "circuits.verifier": ["circuits:read", "-"],
      "events.list": ["events:read", "-"],
      "events.get": ["events:read", "-"],
      "audit.list": ["audit:read", "-"],
      "usage.get": ["proofs:read", "-"],
      "verifications.create": ["proofs:verify", "metered"],
      "verificationKeys.create": ["proofs:verify", "metered"],
      "verificationKeys.list": ["proofs:verify", "-"],
      "verificationKeys.get": ["proofs:verify", "-"],
      "verificationKeys.remove": ["proofs:verify", "-"]
    })
  })

  it("refuses an endpoint with a header schema, naming it", () => {
    const { api, implementations } = apiWith(
      HttpApiEndpoint.get("list", "/things").setHeaders(Schema.Struct({ "x-tenant": Schema.String })).addSuccess(Ok)
    )
    expect(refusal(api, implementations)).toMatch(/^Endpoint things\.list cannot be served: it declares a header schema/)
  })

  it("refuses an endpoint with a middleware the dispatcher does not implement, naming both", () => {
    const { api, implementations } = apiWith(HttpApiEndpoint.get("list", "/things").addSuccess(Ok).middleware(Tracing))
    expect(refusal(api, implementations)).toMatch(/^Endpoint things\.list cannot be served: it uses the middleware test\/Tracing/)
    const grouped = apiWith(HttpApiEndpoint.get("list", "/things").addSuccess(Ok), HttpApiGroup.make("things").middleware(Tracing))
    expect(refusal(grouped.api, grouped.implementations)).toMatch(/things\.list.*test\/Tracing/)
  })

  it("serves multipart forms of UploadedFiles with their 413, and refuses what it cannot serve, naming the endpoint", () => {
    const form = HttpApiSchema.Multipart(Schema.Struct({ title: Schema.String, file: UploadedFile, more: Schema.optional(Schema.Array(UploadedFile)) }))
    const served = apiWith(HttpApiEndpoint.post("upload", "/things").setPayload(form).addSuccess(Ok).addError(UploadTooLargeWire))
    const [endpoint] = compileApi(served.api, served.implementations, { uploadLimitBytes: 1234 }).endpoints
    expect(endpoint!.upload?.limitBytes).toBe(1234)
    expect(Object.fromEntries(endpoint!.upload!.form.parts)).toEqual({
      title: { file: false, repeated: false },
      file: { file: true, repeated: false },
      more: { file: true, repeated: true }
    })
    // A StagedFile part streams to storage; repeated, it is refused (the handler publishes each one it names).
    const staged = apiWith(
      HttpApiEndpoint.post("upload", "/things").setPayload(HttpApiSchema.Multipart(Schema.Struct({ key: StagedFile }))).addSuccess(Ok)
        .addError(UploadTooLargeWire)
    )
    expect(Object.fromEntries(compileApi(staged.api, staged.implementations).endpoints[0]!.upload!.form.parts)).toEqual({
      key: { file: true, repeated: false, staged: true }
    })
    const repeatedStaged = apiWith(
      HttpApiEndpoint.post("upload", "/things").setPayload(HttpApiSchema.Multipart(Schema.Struct({ keys: Schema.Array(StagedFile) })))
        .addSuccess(Ok).addError(UploadTooLargeWire)
    )
    expect(refusal(repeatedStaged.api, repeatedStaged.implementations)).toMatch(/things\.upload.*keys.*repeated StagedFile/)
    const without413 = apiWith(HttpApiEndpoint.post("upload", "/things").setPayload(form).addSuccess(Ok))
    expect(refusal(without413.api, without413.implementations)).toMatch(/things\.upload.*UploadTooLargeWire/)
    const persisted = apiWith(
      HttpApiEndpoint.post("upload", "/things").setPayload(HttpApiSchema.Multipart(Schema.Struct({ file: Multipart.FileSchema })))
        .addSuccess(Ok).addError(UploadTooLargeWire)
    )
    expect(refusal(persisted.api, persisted.implementations)).toMatch(/things\.upload.*file.*UploadedFile/)
    const stream = apiWith(
      HttpApiEndpoint.post("upload", "/things").setPayload(HttpApiSchema.MultipartStream(Schema.Struct({}))).addSuccess(Ok).addError(UploadTooLargeWire)
    )
    expect(refusal(stream.api, stream.implementations)).toMatch(/things\.upload.*multipart stream/)
    const capped = apiWith(
      HttpApiEndpoint.post("upload", "/things").setPayload(HttpApiSchema.Multipart(Schema.Struct({}), { maxTotalSize: Option.some(10) }))
        .addSuccess(Ok).addError(UploadTooLargeWire)
    )
    expect(refusal(capped.api, capped.implementations)).toMatch(/things\.upload.*maxTotalSize/)
    const text = apiWith(HttpApiEndpoint.post("text", "/things").setPayload(HttpApiSchema.Text()).addSuccess(Ok))
    expect(refusal(text.api, text.implementations)).toMatch(/things\.text.*JSON bodies and multipart forms only/)
  })

  it("answers a text success body with its content type, and refuses other encodings", () => {
    const text = apiWith(HttpApiEndpoint.get("source", "/things").addSuccess(HttpApiSchema.Text()))
    const [endpoint] = compileApi(text.api, text.implementations).endpoints
    expect(endpoint!.successHeaders).toEqual({ "content-type": "text/plain; charset=utf-8" })
    expect(endpoint!.successBody("contract Verifier {}")).toBe("contract Verifier {}")
    const bytes = apiWith(HttpApiEndpoint.get("bytes", "/things").addSuccess(HttpApiSchema.Uint8Array()))
    expect(refusal(bytes.api, bytes.implementations)).toMatch(/things\.bytes.*Uint8Array/)
  })

  it("refuses a missing handler and a handler for no endpoint", () => {
    const { api } = apiWith(HttpApiEndpoint.get("list", "/things").addSuccess(Ok))
    expect(refusal(api, [])).toMatch(/things\.list.*has no handler/)
    expect(refusal(api, [{ group: "things", handlers: { list: ok, lost: ok } }])).toMatch(/things\.lost.*no such endpoint/)
  })

  it("refuses metering without its 429 and a 429 without metering", () => {
    const unmetered429 = apiWith(HttpApiEndpoint.post("make", "/things").addSuccess(Ok).addError(RateLimitExceededWire))
    expect(refusal(unmetered429.api, unmetered429.implementations)).toMatch(/things\.make.*metered/)
    const metered429 = apiWith(HttpApiEndpoint.post("make", "/things").addSuccess(Ok).pipe(metered))
    expect(compileApi(metered429.api, metered429.implementations).endpoints[0]!.metered).toBe(true)
    const meteredWithout = apiWith(HttpApiEndpoint.post("make", "/things").addSuccess(Ok).annotate(MeteredEndpoint, true))
    expect(refusal(meteredWithout.api, meteredWithout.implementations)).toMatch(/things\.make.*metered/)
  })

  it("refuses an Idempotency-Key on anything but a POST, or on an endpoint without a bearer token", () => {
    const onGet = apiWith(HttpApiEndpoint.get("list", "/things").addSuccess(Ok).pipe(idempotent), HttpApiGroup.make("things").middleware(Authentication))
    expect(refusal(onGet.api, onGet.implementations)).toMatch(/things\.list.*only a POST/)
    const anonymous = apiWith(HttpApiEndpoint.post("make", "/things").addSuccess(Ok).pipe(idempotent))
    expect(refusal(anonymous.api, anonymous.implementations)).toMatch(/things\.make.*bearer token/)
    const served = apiWith(HttpApiEndpoint.post("make", "/things").addSuccess(Ok).pipe(idempotent), HttpApiGroup.make("things").middleware(Authentication))
    expect(compileApi(served.api, served.implementations).endpoints[0]!.idempotent).toBe(true)
  })

  it("refuses optional path parameters, several success statuses and error schemas without the envelope", () => {
    const optional = apiWith(HttpApiEndpoint.get("get", "/things/:id?").addSuccess(Ok))
    expect(refusal(optional.api, optional.implementations)).toMatch(/things\.get.*optional path parameter/)
    const twice = apiWith(HttpApiEndpoint.get("get", "/things").addSuccess(Ok).addSuccess(Schema.String, { status: 203 }))
    expect(refusal(twice.api, twice.implementations)).toMatch(/things\.get.*2 success responses/)
    const bare = apiWith(HttpApiEndpoint.get("get", "/things").addSuccess(Ok).addError(Schema.Struct({ oops: Schema.String }), { status: 418 }))
    expect(refusal(bare.api, bare.implementations)).toMatch(/things\.get.*without mzk's error envelope/)
  })

  it("refuses a scope on an endpoint without a bearer token", () => {
    const scoped = apiWith(HttpApiEndpoint.get("list", "/things").addSuccess(Ok).pipe(requires("keys:read")))
    expect(refusal(scoped.api, scoped.implementations)).toMatch(/things\.list.*requires a scope/)
    const secured = apiWith(
      HttpApiEndpoint.get("list", "/things").addSuccess(Ok).pipe(requires("keys:read")),
      HttpApiGroup.make("things").middleware(Authentication)
    )
    expect(compileApi(secured.api, secured.implementations).endpoints[0]!.scope).toBe("keys:read")
  })

  it("refuses an API that does not declare the errors the dispatcher answers with", async () => {
    const { api, implementations } = apiWith(HttpApiEndpoint.get("list", "/things").addSuccess(Ok))
    const exit = await Effect.runPromiseExit(Effect.provide(makeDispatcherFor(api, implementations), testCore()))
    expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toMatch(/does not declare errors the dispatcher answers with: InvalidRequest, NotFound/)
  })

  it("fails the dispatcher's start-up with the endpoint's name, before any request", async () => {
    const { api, implementations } = apiWith(
      HttpApiEndpoint.get("list", "/things").setHeaders(Schema.Struct({ "x-tenant": Schema.String })).addSuccess(Ok)
    )
    const exit = await Effect.runPromiseExit(Effect.provide(makeDispatcherFor(api, implementations), testCore()))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(Cause.pretty(exit.cause)).toContain("Endpoint things.list cannot be served")
  })
})
