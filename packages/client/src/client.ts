import { type ArtifactDownload, artifactDownloadOf, type ArtifactKind, type ArtifactOptions, downloadHeaders } from "./download.js"
import { API_PREFIX, type Endpoint, ENDPOINTS } from "./endpoints.js"
import { type ErrorDetail, MzkApiError } from "./errors.js"
import { parseRateLimit, type RateLimit } from "./rateLimit.js"
import type {
  ApiKeyList,
  AuditEntry,
  AuditLogPage,
  AuditLogQuery,
  Circuit,
  CircuitList,
  CircuitUpload,
  CircuitVersionList,
  CircuitWithKey,
  CreateKeyInput,
  CreateProofBatchInput,
  CreateProofInput,
  CreateVerificationInput,
  CreateVerificationKeyInput,
  CreateWebhookInput,
  CreatedApiKey,
  CreatedWebhook,
  Delivery,
  DeliveryAttempt,
  DeliveryAttemptList,
  Event,
  EventList,
  ListCircuitVersionsQuery,
  ListEventsQuery,
  ListProofsQuery,
  PageQuery,
  Proof,
  ProofBatch,
  ProofBatchCancellation,
  ProofCalldata,
  ProofList,
  ProofVerification,
  RecoverWebhookInput,
  Recovery,
  RecoveryList,
  RollKeyInput,
  RotateWebhookSecretInput,
  RotatedWebhook,
  UpdateWebhookInput,
  Usage,
  Verification,
  VerificationKey,
  VerificationKeyList,
  Webhook,
  WebhookList,
  WebhookTest
} from "./types.js"
import type { FileContent, NamedFile, UploadFile } from "./requests.js"

/** What the client sends requests with: the global `fetch`, or any function of its shape. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

export interface ClientOptions {
  /**
   * Where mzk answers: its origin, plus any path prefix a proxy adds (`https://api.example.com`).
   * The client adds `/api/v1`; a base URL that already ends in it is taken as is.
   */
  readonly baseUrl: string
  /** An API key (`mzk_…`), or a session token of the application mzk is embedded in. */
  readonly apiKey: string
  /** Default: the global `fetch`. */
  readonly fetch?: FetchLike
  /** Per request, in ms (default 30 000); `Infinity` for none. */
  readonly timeoutMs?: number
  /** Sent with every request, e.g. a proxy's own authorization. */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * A metered call's result: the response body, and the proof rate limits as they stand after it
 * (`rateLimit`, undefined if the server sent none). `rateLimit` is not enumerable, so the value
 * serialises (`JSON.stringify`, spreading) as the body alone.
 */
export type Metered<T> = T & { readonly rateLimit: RateLimit | undefined }

export interface WaitOptions {
  /** Give up after this many ms (default 60 000): an `MzkApiError` with code `timeout`. */
  readonly timeoutMs?: number
  /** Between polls, in ms (default 500). */
  readonly intervalMs?: number
}

const DEFAULT_TIMEOUT_MS = 30_000

type Params = Readonly<Record<string, string>>
type Query = Readonly<Record<string, string | number | ReadonlyArray<string> | Readonly<Record<string, string>> | undefined>>

/** Options of a call that creates something (every POST). */
export interface CreateOptions {
  /**
   * Makes the call safe to retry: mzk keeps the first response to this key for 24 hours and
   * answers every retry of the same call with it (nothing is created twice, no quota is spent
   * again). Use a fresh random value (`crypto.randomUUID()`) per intended call; see the API's
   * `Idempotency-Key`.
   */
  readonly idempotencyKey?: string
}

interface Call {
  readonly idempotencyKey?: string | undefined
  readonly params?: Params
  readonly query?: Query
  readonly json?: unknown
  readonly form?: FormData
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const pathOf = (template: string, params: Params = {}) =>
  template.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name]
    // An empty id would silently address the collection instead (`DELETE /webhooks/`).
    if (value === undefined || value === "") throw new TypeError(`${name} is required`)
    return encodeURIComponent(value)
  })

const queryOf = (query: Query = {}) => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    // A list is the parameter repeated (`?type=a&type=b`), as the server reads it.
    if (Array.isArray(value)) for (const item of value) search.append(name, item)
    // An object is one bracketed parameter per key (`?metadata[order]=1`), OpenAPI's deepObject.
    else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value as Record<string, string>)) search.set(`${name}[${key}]`, item)
    }
    else if (value !== undefined) search.set(name, String(value))
  }
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

const withRateLimit = <T>(value: T, rateLimit: RateLimit | undefined): Metered<T> =>
  Object.defineProperty(value as object, "rateLimit", { value: rateLimit, enumerable: false }) as Metered<T>

const toBlob = (content: FileContent, contentType: string): Blob => {
  if (content instanceof Blob) return content.type === "" ? new Blob([content], { type: contentType }) : content
  // Copied into an ArrayBuffer of its own: a Uint8Array may view part of a larger (or shared) buffer.
  const bytes = typeof content === "string" ? content : content instanceof Uint8Array ? content.slice() : new Uint8Array(content)
  return new Blob([bytes], { type: contentType })
}

const isNamedContent = (file: UploadFile): file is Extract<NamedFile, { readonly filename: string }> =>
  isRecord(file) && "filename" in file && "content" in file

/** A file part: its name is the file's own, else `fallback`; strings go as text, bytes as octet-stream. */
const appendFile = (form: FormData, part: string, file: UploadFile, fallback: string | undefined) => {
  const textType = part === "main" || part === "sources" ? "text/plain" : "application/octet-stream"
  if (isNamedContent(file)) {
    const type = file.contentType ?? (typeof file.content === "string" ? textType : "application/octet-stream")
    form.append(part, toBlob(file.content, type), file.filename)
    return
  }
  const name = file instanceof Blob && "name" in file && typeof file.name === "string" && file.name !== "" ? file.name : fallback
  if (name === undefined) throw new TypeError(`${part}: each file needs its path in the upload as its name (a File, or { filename, content })`)
  form.append(part, toBlob(file, typeof file === "string" ? textType : "application/octet-stream"), name)
}

/** The upload's text fields; every other part of `CircuitUpload` (generated from the API's form) is a file. */
const TEXT_PARTS = ["name", "description", "metadata"] as const

/** The filename a file part gets when the caller gives none (the server reads an archive's format from its bytes). */
const FALLBACK_NAMES: Readonly<Record<string, string>> = { main: "main.circom", noir_program: "program.json", archive: "sources.archive" }

const uploadForm = (upload: CircuitUpload): FormData => {
  const form = new FormData()
  form.append("name", upload.name)
  if (upload.description !== undefined) form.append("description", upload.description)
  if (upload.metadata !== undefined) form.append("metadata", upload.metadata)
  // With an archive, `main` is no file but the main file's path inside it: a text field.
  const mainIsPath = upload.archive !== undefined && typeof upload.main === "string"
  if (mainIsPath) form.append("main", upload.main as string)
  const files: ReadonlyArray<readonly [string, UploadFile | ReadonlyArray<NamedFile> | undefined]> = Object.entries(upload)
    .filter(([part]) => !(TEXT_PARTS as ReadonlyArray<string>).includes(part) && !(mainIsPath && part === "main"))
  for (const [part, file] of files) {
    if (file === undefined) continue
    if (Array.isArray(file)) for (const each of file as ReadonlyArray<NamedFile>) appendFile(form, part, each, undefined)
    else appendFile(form, part, file as UploadFile, FALLBACK_NAMES[part] ?? `circuit.${part}`)
  }
  return form
}

const detailsOf = (value: unknown): ReadonlyArray<ErrorDetail> | undefined =>
  Array.isArray(value)
    ? value.filter((d): d is ErrorDetail => isRecord(d) && typeof d.path === "string" && typeof d.message === "string")
    : undefined

/** A non-2xx answer as an `MzkApiError`: the envelope `{"error": {code, message, request_id, details}}` where there is one. */
const errorOf = async (response: Response, endpoint: Endpoint): Promise<MzkApiError> => {
  const text = await response.text().catch(() => "")
  let envelope: Record<string, unknown> | undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (isRecord(parsed) && isRecord(parsed.error)) envelope = parsed.error
  } catch {
    // Not mzk's answer (a proxy's HTML page, an empty body): described by its status below.
  }
  const retryAfter = response.headers.get("retry-after")
  const requestId = typeof envelope?.request_id === "string" ? envelope.request_id : response.headers.get("request-id") ?? undefined
  return new MzkApiError({
    status: response.status,
    code: typeof envelope?.code === "string" ? envelope.code : "unexpected_response",
    message: typeof envelope?.message === "string"
      ? envelope.message
      : `${endpoint.method} ${endpoint.path} answered ${response.status} ${response.statusText}`.trim(),
    requestId,
    details: detailsOf(envelope?.details),
    retryAfterSeconds: retryAfter === null || !/^\d+$/.test(retryAfter) ? undefined : Number(retryAfter),
    rateLimit: endpoint.metered === true ? parseRateLimit(response.headers) : undefined
  })
}

/**
 * A list call: a Promise of its first page (`await client.proofs.list()`), and an async iterable
 * of every item from there on (`for await (const proof of client.proofs.list())`), fetching the
 * next page with `starting_after` the last item's id while `has_more`. With `ending_before` it
 * walks the other way, toward newer items, yielding them oldest first (Stripe's auto-paging). The
 * first page is fetched once, whichever way it is read.
 */
export type PagedList<Page, Item> = Promise<Page> & AsyncIterable<Item>

interface Cursors {
  readonly starting_after?: string
  readonly ending_before?: string
}

const paged = <Q extends Cursors, Page extends { readonly has_more: boolean }, Item>(
  fetchPage: (query: Q) => Promise<Page>,
  query: Q,
  itemsOf: (page: Page) => ReadonlyArray<Item>,
  idOf: (item: Item) => string
): PagedList<Page, Item> => {
  const first = fetchPage(query)
  const backwards = query.ending_before !== undefined
  const iterate = async function*(): AsyncGenerator<Item> {
    let page = await first
    for (;;) {
      const items = itemsOf(page)
      yield* backwards ? [...items].reverse() : items
      if (!page.has_more || items.length === 0) return
      const { ending_before: _before, starting_after: _after, ...rest } = query
      page = await fetchPage(
        (backwards ? { ...rest, ending_before: idOf(items[0]!) } : { ...rest, starting_after: idOf(items[items.length - 1]!) }) as Q
      )
    }
  }
  return Object.assign(first, { [Symbol.asyncIterator]: iterate })
}

const byId = (item: { readonly id: string }) => item.id

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * A typed client of mzk's `/api/v1`: one Promise-returning method per endpoint, grouped as the
 * API is (`keys`, `webhooks`, `proofs`, `circuits`, `events`, `audit`, `usage`, `verifications`,
 * `verificationKeys`). Failures reject with `MzkApiError`.
 */
export const createClient = (options: ClientOptions) => {
  if (typeof options.apiKey !== "string" || options.apiKey === "") throw new TypeError("apiKey is required")
  const base = options.baseUrl.replace(/\/+$/, "").replace(/\/api\/v1$/, "")
  // Validated now, so a typo fails at construction rather than on the first call.
  new URL(base)
  const send = options.fetch ?? ((url: string, init: RequestInit) => globalThis.fetch(url, init))
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS

  /** Why a request got no answer: `timeout` (no answer within `timeoutMs`) or `network_error`. */
  const unsent = (endpoint: Endpoint, url: string, cause: unknown) => {
    const timedOut = cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError")
    return new MzkApiError({
      status: 0,
      code: timedOut ? "timeout" : "network_error",
      message: timedOut
        ? `${endpoint.method} ${url}: no answer within ${timeoutMs} ms`
        : `${endpoint.method} ${url}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause
    })
  }

  const request = async (endpoint: Endpoint, call: Call = {}): Promise<{ readonly response: Response; readonly body: unknown }> => {
    const url = `${base}${API_PREFIX}${pathOf(endpoint.path, call.params)}${queryOf(call.query)}`
    const headers: Record<string, string> = { ...options.headers, authorization: `Bearer ${options.apiKey}`, accept: "application/json" }
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey
    let body: string | FormData | undefined
    if (call.json !== undefined) {
      headers["content-type"] = "application/json"
      body = JSON.stringify(call.json)
    } else if (call.form !== undefined) {
      body = call.form // fetch writes the multipart content-type with its boundary
    }
    let response: Response
    try {
      response = await send(url, {
        method: endpoint.method,
        headers,
        ...(body === undefined ? {} : { body }),
        ...(Number.isFinite(timeoutMs) ? { signal: AbortSignal.timeout(timeoutMs) } : {})
      })
    } catch (cause) {
      throw unsent(endpoint, url, cause)
    }
    if (!response.ok) throw await errorOf(response, endpoint)
    if (response.status === 204) return { response, body: undefined }
    const text = await response.text()
    if (!(response.headers.get("content-type") ?? "").includes("json")) return { response, body: text }
    try {
      return { response, body: JSON.parse(text) }
    } catch (cause) {
      throw new MzkApiError({
        status: response.status,
        code: "invalid_response",
        message: `${endpoint.method} ${endpoint.path} answered ${response.status} with a body that is not JSON`,
        requestId: response.headers.get("request-id") ?? undefined,
        cause
      })
    }
  }

  const json = async <T>(endpoint: Endpoint, call?: Call): Promise<T> => (await request(endpoint, call)).body as T
  const text = async (endpoint: Endpoint, call?: Call): Promise<string> => String((await request(endpoint, call)).body)
  const none = async (endpoint: Endpoint, call?: Call): Promise<void> => {
    await request(endpoint, call)
  }
  const metered = async <T>(endpoint: Endpoint, call?: Call): Promise<Metered<T>> => {
    const { body, response } = await request(endpoint, call)
    return withRateLimit(body as T, parseRateLimit(response.headers))
  }
  // Every parameter given is sent, the page's first: the query types are generated from the API's,
  // so a parameter the server adds reaches the query string without a change here.
  const page = (query: ListEventsQuery | ListProofsQuery | AuditLogQuery | ListCircuitVersionsQuery | PageQuery = {}): Query => ({
    limit: undefined,
    starting_after: undefined,
    ending_before: undefined,
    ...query
  })

  const { audit, circuits, events, keys, proofs, usage, verificationKeys, verifications, webhooks } = ENDPOINTS

  const getProof = (id: string) => json<Proof>(proofs.get, { params: { id } })

  /**
   * A circuit's file as it arrives. `timeoutMs` bounds the wait for the answer's head only: reading
   * a zkey of gigabytes may take far longer, and `signal` is what stops it.
   */
  const artifact = async (name: string, kind: ArtifactKind, download: ArtifactOptions = {}): Promise<ArtifactDownload> => {
    const endpoint = circuits.artifact
    const url = `${base}${API_PREFIX}${pathOf(endpoint.path, { name, kind })}${queryOf({ proving_system: download.proving_system })}`
    const headers = { ...options.headers, authorization: `Bearer ${options.apiKey}`, ...downloadHeaders(download) }
    const timeout = new AbortController()
    const timer = Number.isFinite(timeoutMs) ? setTimeout(() => timeout.abort(new DOMException("no answer", "TimeoutError")), timeoutMs) : undefined
    const signal = download.signal === undefined ? timeout.signal : AbortSignal.any([download.signal, timeout.signal])
    let response: Response
    try {
      response = await send(url, { method: "GET", headers, signal })
    } catch (cause) {
      throw unsent(endpoint, url, cause)
    } finally {
      clearTimeout(timer)
    }
    if (response.status !== 304 && !response.ok) throw await errorOf(response, endpoint)
    return artifactDownloadOf(response)
  }

  return {
    keys: {
      /** A new key; its raw value (`key`) is in this response only. */
      create: (input: CreateKeyInput, create: CreateOptions = {}) => json<CreatedApiKey>(keys.create, { json: input, ...create }),
      list: () => json<ApiKeyList>(keys.list),
      /** Permanent: later requests with the key get 401 `invalid_api_key`. */
      revoke: (id: string) => none(keys.revoke, { params: { id } }),
      /**
       * A new key with the same name, description and scopes (its raw `key` in this response
       * only); the old one keeps working for `expires_in` seconds (default 24 h), then gets 401.
       */
      roll: (id: string, input: RollKeyInput = {}, create: CreateOptions = {}) =>
        json<CreatedApiKey>(keys.roll, { params: { id }, json: input, ...create })
    },
    webhooks: {
      /** Its signing secret (`secret`) is in this response only. */
      create: (input: CreateWebhookInput, create: CreateOptions = {}) => json<CreatedWebhook>(webhooks.create, { json: input, ...create }),
      /** Newest first; a Promise of one page, and `for await` over every webhook. */
      list: (query: PageQuery = {}): PagedList<WebhookList, Webhook> =>
        paged((q) => json<WebhookList>(webhooks.list, { query: page(q) }), query, (p) => p.webhooks, byId),
      get: (id: string) => json<Webhook>(webhooks.get, { params: { id } }),
      update: (id: string, changes: UpdateWebhookInput) => json<Webhook>(webhooks.update, { params: { id }, json: changes }),
      remove: (id: string) => none(webhooks.remove, { params: { id } }),
      /**
       * A new signing secret (`secret`, in this response only); the replaced one keeps signing
       * deliveries beside it for `expires_in` seconds (default 24 h), so receivers switch without a
       * failed delivery.
       */
      rotateSecret: (id: string, input: RotateWebhookSecretInput = {}, create: CreateOptions = {}) =>
        json<RotatedWebhook>(webhooks.rotateSecret, { params: { id }, json: input, ...create }),
      /** The webhook's delivery attempts, newest first; a Promise of one page, and `for await` over every attempt. */
      deliveries: (id: string, query: PageQuery = {}): PagedList<DeliveryAttemptList, DeliveryAttempt> =>
        paged((q) => json<DeliveryAttemptList>(webhooks.deliveries, { params: { id }, query: page(q) }), query, (p) => p.deliveries, byId),
      /** One delivery (an attempt's `delivery_id`): its status and when its next attempt is due. */
      delivery: (id: string, deliveryId: string) => json<Delivery>(webhooks.delivery, { params: { id, delivery_id: deliveryId } }),
      /** Sends a `webhook.test` event to this webhook only (202): one attempt, follow it with `delivery`. */
      test: (id: string, create: CreateOptions = {}) => json<WebhookTest>(webhooks.test, { params: { id }, ...create }),
      /** One more attempt of a delivery now (202): the same event, signed afresh; never disables the webhook. */
      retryDelivery: (id: string, deliveryId: string, create: CreateOptions = {}) =>
        json<Delivery>(webhooks.retryDelivery, { params: { id, delivery_id: deliveryId }, ...create }),
      /** Re-queues, in the background, the webhook's failed deliveries since `since` (202); follow it with `recovery`. */
      recover: (id: string, input: RecoverWebhookInput, create: CreateOptions = {}) =>
        json<Recovery>(webhooks.recover, { params: { id }, json: input, ...create }),
      /** The webhook's recoveries, newest first; a Promise of one page, and `for await` over every recovery. */
      recoveries: (id: string, query: PageQuery = {}): PagedList<RecoveryList, Recovery> =>
        paged((q) => json<RecoveryList>(webhooks.recoveries, { params: { id }, query: page(q) }), query, (p) => p.recoveries, byId),
      recovery: (id: string, recoveryId: string) => json<Recovery>(webhooks.recovery, { params: { id, recovery_id: recoveryId } })
    },
    proofs: {
      /** Queues a proof (202, `queued`); the result comes as `proof.completed`/`proof.failed`, or poll with `wait`. */
      create: (input: CreateProofInput, create: CreateOptions = {}) => metered<Proof>(proofs.create, { json: input, ...create }),
      /** 1 to 100 proofs, accepted or refused as a whole. */
      createBatch: (input: CreateProofBatchInput, create: CreateOptions = {}) =>
        metered<ProofBatch>(proofs.createBatch, { json: input, ...create }),
      /** Newest first; a Promise of one page, and `for await` over every proof. */
      list: (query: ListProofsQuery = {}): PagedList<ProofList, Proof> =>
        paged((q) => json<ProofList>(proofs.list, { query: page(q) }), query, (p) => p.proofs, (proof) => proof.proof_id),
      get: getProof,
      /** Checks a completed proof against its circuit's verification key; fires `proof.verified`. */
      verify: (id: string) => metered<ProofVerification>(proofs.verify, { params: { id } }),
      /** A completed proof as the call of its circuit's Solidity verifier. */
      calldata: (id: string) => json<ProofCalldata>(proofs.calldata, { params: { id } }),
      /**
       * Cancels a queued or running proof: `canceled` at once (a running one is stopped), its daily
       * quota unit given back, `proof.canceled` fired. A settled proof rejects with 409
       * `proof_not_cancelable`.
       */
      cancel: (id: string, create: CreateOptions = {}) => json<Proof>(proofs.cancel, { params: { id }, ...create }),
      /**
       * Cancels every queued or running proof of a batch: the batch's proofs as they stand, and
       * `canceled_count` (0 when every proof had already settled).
       */
      cancelBatch: (batchId: string, create: CreateOptions = {}) =>
        json<ProofBatchCancellation>(proofs.cancelBatch, { params: { batch_id: batchId }, ...create }),
      /**
       * Polls `get` until the proof is no longer queued or running (completed, failed, canceled or expired).
       * Webhooks are the better way to learn of results; this is for scripts and tests.
       */
      wait: async (id: string, waitOptions: WaitOptions = {}): Promise<Proof> => {
        const deadline = Date.now() + (waitOptions.timeoutMs ?? 60_000)
        for (;;) {
          const proof = await getProof(id)
          if (proof.status !== "queued" && proof.status !== "running") return proof
          if (Date.now() >= deadline) {
            throw new MzkApiError({ status: 0, code: "timeout", message: `Proof ${id} is still ${proof.status}` })
          }
          await sleep(Math.min(waitOptions.intervalMs ?? 500, Math.max(0, deadline - Date.now())))
        }
      }
    },
    circuits: {
      /** Uploads a circuit (202, `compiling`); it ends `ready` or `failed`, announced by `circuit.ready`/`circuit.failed`. */
      create: async (upload: CircuitUpload, create: CreateOptions = {}) => json<Circuit>(circuits.create, { form: uploadForm(upload), ...create }),
      /** The built-in circuits, then each of the account's names at its newest version. */
      list: () => json<CircuitList>(circuits.list),
      /** With its verification key: `name` is the newest version (whatever its status), `name@2` exactly version 2. */
      get: (name: string) => json<CircuitWithKey>(circuits.get, { params: { name } }),
      /**
       * Every live version of a name, newest first; a Promise of one page, and `for await` over
       * every version (each page's cursor is a version's `id`).
       */
      versions: (name: string, query: ListCircuitVersionsQuery = {}): PagedList<CircuitVersionList, Circuit> =>
        paged((q) => json<CircuitVersionList>(circuits.versions, { params: { name }, query: page(q) }), query, (p) => p.versions, (c) => c.id ?? ""),
      /**
       * `name@2` removes version 2; `name` every version of the name. Rejects with 409
       * `circuit_in_use` while a proof of a version it would remove is queued or running.
       */
      remove: (name: string) => none(circuits.remove, { params: { name } }),
      /** The Solidity source of a contract that verifies the circuit's proofs on chain (`name` or `name@N`). */
      verifier: (name: string) => text(circuits.verifier, { params: { name } }),
      /**
       * One of a ready circuit's files (`name` or `name@N`): `wasm` and `zkey` to prove with
       * snarkjs, `verification_key`, `r1cs`, `sym`, or a Noir circuit's `noir_program`. Streamed:
       * `body` as it arrives, `bytes()` whole; `offset` (with `ifRange`) resumes, `ifNoneMatch`
       * revalidates a copy held. Rejects with 409 `circuit_not_ready` while it builds.
       */
      artifact
    },
    events: {
      /**
       * The account's events, newest first, as webhooks receive them; kept for the retention window
       * (30 days by default). A Promise of one page, and `for await` over every event.
       */
      list: (query: ListEventsQuery = {}): PagedList<EventList, Event> =>
        paged((q) => json<EventList>(events.list, { query: page(q) }), query, (p) => p.events, byId),
      get: (id: string) => json<Event>(events.get, { params: { id } })
    },
    audit: {
      /** The account's audit log, newest first (needs `audit:read`); a Promise of one page, and `for await` over every entry. */
      list: (query: AuditLogQuery = {}): PagedList<AuditLogPage, AuditEntry> =>
        paged((q) => json<AuditLogPage>(audit.list, { query: page(q) }), query, (p) => p.entries, byId)
    },
    usage: {
      /**
       * The account's usage now (needs `proofs:read`): the key's minute and the account's day with
       * what is left, proofs created today by status, proving seconds today and this month, per circuit.
       */
      get: () => json<Usage>(usage.get)
    },
    verifications: {
      /**
       * Verifies a proof made anywhere (snarkjs JSON for groth16, plonk, fflonk) against an inline
       * key, a registered one or a circuit's; `valid: false` resolves, a malformed input rejects
       * with 400 naming the field. Metered as a proof request (needs `proofs:verify`).
       */
      create: (input: CreateVerificationInput) => metered<Verification>(verifications.create, { json: input })
    },
    verificationKeys: {
      /**
       * Registers a key once (checked as a verification checks it), to name by id in
       * `verifications.create`. Metered as a proof request; an account holds at most 50 (409
       * `verification_key_limit_reached`).
       */
      create: (input: CreateVerificationKeyInput, create: CreateOptions = {}) =>
        metered<VerificationKey>(verificationKeys.create, { json: input, ...create }),
      /** Registered keys, newest first; a Promise of one page, and `for await` over every key. */
      list: (query: PageQuery = {}): PagedList<VerificationKeyList, VerificationKey> =>
        paged((q) => json<VerificationKeyList>(verificationKeys.list, { query: page(q) }), query, (p) => p.verification_keys, byId),
      get: (id: string) => json<VerificationKey>(verificationKeys.get, { params: { id } }),
      remove: (id: string) => none(verificationKeys.remove, { params: { id } })
    }
  }
}

export type MzkClient = ReturnType<typeof createClient>
