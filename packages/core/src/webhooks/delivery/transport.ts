import { Context, Effect, Schema } from "effect"

export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
  /**
   * The webhook the attempt is for. A transport that keeps connections open keeps them per
   * webhook, so one webhook's slow receiver never holds up another's on the same host and port.
   */
  readonly webhookId?: string
}

export interface WebhookResponse {
  readonly status: number
  /** The start of the response body, at most 4 KiB. */
  readonly body: string
  /** The response's `Retry-After` header as received, when it had one: a 429 or 503 may delay the retry with it. */
  readonly retryAfter?: string | undefined
}

/** The POST got no HTTP answer; `reason` is the error class recorded in the attempt log. */
export class TransportFailure extends Schema.TaggedError<TransportFailure>()("TransportFailure", {
  reason: Schema.Literal("timeout", "dns", "connection", "tls", "blocked_address", "invalid_url", "other"),
  message: Schema.String
}) {}

/**
 * Sends one signed webhook POST. Never follows redirects. A production transport resolves the
 * host itself, refuses non-public addresses and connects only to the address it checked.
 */
export class WebhookTransport extends Context.Tag("@mzk/core/WebhookTransport")<WebhookTransport, {
  readonly send: (request: WebhookRequest) => Effect.Effect<WebhookResponse, TransportFailure>
}>() {}

/** The host name could not be resolved. */
export class HostResolutionFailure extends Schema.TaggedError<HostResolutionFailure>()("HostResolutionFailure", {
  message: Schema.String
}) {}

/**
 * Host name → every address it resolves to, for the check made when a webhook URL is created or
 * changed. The default resolves nothing, leaving that check to literal addresses and reserved
 * names; the delivery-time check in the transport is the guard that always runs, so a missing
 * resolver costs early feedback, not safety. The server provides a DNS-backed one.
 */
export class HostResolver extends Context.Reference<HostResolver>()("@mzk/core/HostResolver", {
  defaultValue: (): {
    readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<string>, HostResolutionFailure>
  } => ({ resolve: () => Effect.succeed([]) })
}) {}
