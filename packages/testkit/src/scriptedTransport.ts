import { TransportFailure, WebhookTransport, type WebhookRequest, type WebhookResponse } from "@mzk/core"
import { Clock, Duration, Effect, Layer } from "effect"

/**
 * What one attempt gets back. `delay` passes on the `Clock`, so `TestClock` drives it;
 * `retryAfter` is the answer's `Retry-After` header (a 429 or 503 may delay the retry with it).
 */
export type ScriptedResponse =
  | { readonly status: number; readonly body?: string; readonly retryAfter?: string; readonly delay?: Duration.DurationInput }
  | { readonly error: TransportFailure["reason"]; readonly delay?: Duration.DurationInput }
  /** Never answers: the caller's timeout decides. */
  | { readonly hang: true }

/**
 * Per URL: the responses to its 1st, 2nd, … request (the last one repeats), or a function of the
 * request number (1-based) and the request.
 */
export type Script = Readonly<
  Record<string, ReadonlyArray<ScriptedResponse> | ((n: number, request: WebhookRequest) => ScriptedResponse)>
>

export interface RecordedRequest extends WebhookRequest {
  /** `Clock` time when the request was sent, in ms. */
  readonly at_ms: number
  /** 1-based count of requests to this URL, this one included. */
  readonly n: number
}

export interface ScriptedTransport {
  readonly layer: Layer.Layer<WebhookTransport>
  /** Every request so far, in the order sent. */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  readonly requestsTo: (url: string) => Effect.Effect<ReadonlyArray<RecordedRequest>>
}

/**
 * A `WebhookTransport` that answers from a script and records what it was sent. URLs the script
 * does not name get `fallback` (200 unless given).
 */
export const makeScriptedTransport = (
  script: Script = {},
  fallback: ScriptedResponse = { status: 200, body: "ok" }
): Effect.Effect<ScriptedTransport> =>
  Effect.sync(() => {
    // Mutable on purpose: fibers run one at a time, and copying the log per request is quadratic.
    const log: Array<RecordedRequest> = []
    const perUrl = new Map<string, number>()

    const pick = (request: WebhookRequest, n: number): ScriptedResponse => {
      const entry = script[request.url]
      if (entry === undefined) return fallback
      if (typeof entry === "function") return entry(n, request)
      return entry[Math.min(n, entry.length) - 1] ?? fallback
    }

    const send = (request: WebhookRequest): Effect.Effect<WebhookResponse, TransportFailure> =>
      Effect.gen(function*() {
        const at_ms = yield* Clock.currentTimeMillis
        const n = (perUrl.get(request.url) ?? 0) + 1
        perUrl.set(request.url, n)
        log.push({ ...request, at_ms, n })
        const response = pick(request, n)
        if ("hang" in response) return yield* Effect.never
        if (response.delay !== undefined) yield* Effect.sleep(Duration.decode(response.delay))
        if ("error" in response) {
          return yield* new TransportFailure({ reason: response.error, message: `scripted ${response.error}` })
        }
        return { status: response.status, body: response.body ?? "", ...(response.retryAfter === undefined ? {} : { retryAfter: response.retryAfter }) }
      })

    return {
      layer: Layer.succeed(WebhookTransport, { send }),
      requests: Effect.sync(() => [...log]),
      requestsTo: (url) => Effect.sync(() => log.filter((r) => r.url === url))
    }
  })
