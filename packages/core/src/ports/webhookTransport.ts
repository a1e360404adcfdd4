import { Context, type Effect, Schema } from "effect"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
}

export interface WebhookResponse {
  readonly status: number
  /** The start of the response body, at most 4 KiB. */
  readonly body: string
}

/** The POST got no HTTP answer; `reason` is the error class recorded in the attempt log. */
export class TransportFailure extends Schema.TaggedError<TransportFailure>()("TransportFailure", {
  reason: Schema.Literal("timeout", "dns", "connection", "tls", "blocked_address", "invalid_url", "other"),
  message: Schema.String
}) {}

/** Sends one signed webhook POST. Never follows redirects. */
export class WebhookTransport extends Context.Tag("@mzk/core/WebhookTransport")<WebhookTransport, {
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse, TransportFailure>
}>() {}
