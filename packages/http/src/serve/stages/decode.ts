import { type Circuits, invalidRequest, InvalidRequest, type StorageError, unstorableTextIn } from "@mzk/core"
import { Effect, Exit, Runtime, Scope, Stream } from "effect"
import { type PayloadTooLarge, UploadTooLarge } from "../../api/errors.js"
import { header, type MzkRequest } from "../../wire/message.js"
import { makeFormParser, type PartCut, type StagePart } from "../../wire/multipart.js"
import { tooLarge } from "../../wire/precheck.js"
import type { CompiledEndpoint, Decode } from "../compile.js"
import type { RequestRecord, Stage } from "../pipeline.js"
import type { EndpointEnv } from "./env.js"

const notJson = () => new InvalidRequest({ message: "The request body is not valid JSON" })

/**
 * A body text can hold a NUL or a lone surrogate only as a `\u` escape (a raw NUL is not JSON, and
 * the text was decoded from UTF-8, which has no surrogates): without one, nothing is walked.
 */
const MAY_HOLD_UNSTORABLE = /\\u(?:0000|d[89a-f])/i

/**
 * The body as JSON, and its text (what an idempotency key's fingerprint covers). A string no store
 * keeps (a NUL, a lone surrogate), anywhere in it, keys included, is a 400 naming each, whatever
 * the field: Postgres refused one in a field that is only looked up (a proof's `type`) with a 503.
 */
const readJson = (request: MzkRequest) =>
  request.body.pipe(
    Effect.mapError((error) => (error._tag === "BodyTooLarge" ? tooLarge() : notJson())),
    Effect.flatMap((text) => Effect.try({ try: () => [JSON.parse(text) as unknown, text] as const, catch: notJson })),
    Effect.flatMap((read) => {
      const refused = MAY_HOLD_UNSTORABLE.test(read[1]) ? unstorableTextIn(read[0]) : []
      return refused.length === 0 ? Effect.succeed(read) : Effect.fail(invalidRequest(refused))
    })
  )

const MIB = 1024 * 1024

export const uploadTooLarge = (limitBytes: number) =>
  new UploadTooLarge({
    message: `The upload is over this server's upload limit of ${limitBytes} bytes` +
      (limitBytes % MIB === 0 ? ` (${limitBytes / MIB} MiB)` : "")
  })

const notForm = () => new InvalidRequest({ message: "The request body could not be read" })

const PART_CUT: PartCut = { _tag: "PartCut" }

/**
 * An upload's form, parsed as the body streams in, refused past the endpoint's limit. Staged parts
 * go to `stage` as they arrive, in the request's scope: the staged artifacts live until the
 * request ends, for the handler to publish. However the read ends, every staging has stopped
 * before this does, so the scope's end finds nothing still writing.
 */
const readForm = (request: MzkRequest, upload: NonNullable<CompiledEndpoint["upload"]>, stage: Circuits["Type"]["stageUpload"]) =>
  Effect.flatMap(Effect.all([Effect.scope, Effect.runtime<never>()]), ([scope, runtime]) => {
    const runFork = Runtime.runFork(runtime)
    const stagePart: StagePart = (part) =>
      new Promise((resolve) => {
        const chunks = Stream.fromAsyncIterable(part as AsyncIterable<Uint8Array>, () => PART_CUT)
        runFork(Scope.extend(stage(chunks), scope)).addObserver(resolve)
      })
    const parser = makeFormParser(header(request, "content-type") ?? "", upload.form, stagePart)
    return request.stream(upload.limitBytes, parser.write).pipe(
      Effect.mapError((error) => (error._tag === "BodyTooLarge" ? uploadTooLarge(upload.limitBytes) : notForm())),
      Effect.zipRight(parser.end),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.promise(parser.abort)))
    )
  })

/** The path parameters, decoded with the endpoint's schema. */
export const decodePath = (decode: Decode): Stage<RequestRecord, EndpointEnv> => (record, next) =>
  Effect.flatMap(decode(record.params), (path) => next({ ...record, path }))

/** A JSON body, decoded; an idempotency key is then bound to its text. */
export const decodeJson = (decode: Decode): Stage<RequestRecord, EndpointEnv> => (record, next) =>
  Effect.flatMap(readJson(record.request), ([json, text]) =>
    Effect.flatMap(decode(json), (payload) =>
      next(record.idempotencyKey === undefined ? { ...record, payload } : { ...record, payload, fingerprintBody: text })))

/** An upload's form, its staged parts living in the request's scope, decoded. */
export const decodeForm = (
  decode: Decode,
  upload: NonNullable<CompiledEndpoint["upload"]>,
  stage: Circuits["Type"]["stageUpload"]
): Stage<RequestRecord, EndpointEnv> => (record, next) => {
  const body: Effect.Effect<unknown, InvalidRequest | PayloadTooLarge | UploadTooLarge | StorageError, Scope.Scope> = readForm(record.request, upload, stage)
  return Effect.flatMap(Effect.flatMap(body, decode), (payload) => next({ ...record, payload }))
}

/** The query's declared parameters, decoded. */
export const decodeUrlParams = (decode: Decode): Stage<RequestRecord, EndpointEnv> => (record, next) =>
  Effect.flatMap(decode(record.query), (urlParams) => next({ ...record, urlParams }))
