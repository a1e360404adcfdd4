import { Context } from "effect"

/** The version in the `User-Agent` of webhook requests. */
export const MZK_VERSION = "0.1.0"

/**
 * Webhook delivery settings. The defaults are the spec's and DESIGN.md's values; embedders and
 * tests provide others with `Layer.succeed(WebhookConfig, { ...DEFAULT_WEBHOOK_CONFIG, … })`.
 */
export interface WebhookConfigShape {
  /**
   * Development only: accept `http://` URLs and non-public hosts (loopback, private ranges). Never
   * set it on a server that holds other people's webhooks: it turns the service into a proxy
   * into its own network.
   */
  readonly allowInsecureWebhooks: boolean
  /** Delays of the retries, in ms after the initial failure (not after each other). */
  readonly retryScheduleMs: ReadonlyArray<number>
  /** Per attempt; a slower answer is a failed attempt. */
  readonly timeoutMs: number
  readonly userAgent: string
  /** Attempts in flight at once, over all endpoints. */
  readonly maxConcurrentDeliveries: number
  /** Attempts in flight at once to one webhook, so one slow endpoint cannot take every slot. */
  readonly maxConcurrentPerWebhook: number
  /**
   * Attempts in flight (or claimed and waiting for their webhook's slot) at once for one account,
   * in each engine: below `maxConcurrentDeliveries`, so an account whose receivers all hang holds
   * only its share and another account's delivery finds a free slot at once. With the defaults,
   * three such accounts together still leave a quarter of the slots free.
   */
  readonly maxConcurrentPerAccount: number
  /** Deliveries taken from storage per claim. */
  readonly claimBatchSize: number
  /**
   * How long a claim holds a delivery before another process may take it over. Longer than
   * `timeoutMs` plus bookkeeping, or a slow attempt would be sent twice.
   */
  readonly leaseMs: number
  /**
   * How often an idle engine looks for work it was not told about: deliveries recorded by other
   * processes, leases left by a process that died. Work recorded in this process wakes it at once.
   */
  readonly pollIntervalMs: number
}

export const DEFAULT_WEBHOOK_CONFIG: WebhookConfigShape = {
  allowInsecureWebhooks: false,
  retryScheduleMs: [30_000, 300_000, 1_800_000, 7_200_000, 28_800_000],
  timeoutMs: 10_000,
  userAgent: `mzk-webhooks/${MZK_VERSION}`,
  maxConcurrentDeliveries: 64,
  maxConcurrentPerWebhook: 8,
  maxConcurrentPerAccount: 16,
  claimBatchSize: 100,
  leaseMs: 60_000,
  pollIntervalMs: 1_000
}

export class WebhookConfig extends Context.Reference<WebhookConfig>()("@mzk/core/WebhookConfig", {
  defaultValue: (): WebhookConfigShape => DEFAULT_WEBHOOK_CONFIG
}) {}
