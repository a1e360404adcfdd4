import {
  AccountServices,
  AuditConfig,
  DEFAULT_AUDIT_CONFIG,
  DEFAULT_EVENTS_CONFIG,
  DEFAULT_LIMITS,
  DEFAULT_PROOFS_CONFIG,
  DEFAULT_WEBHOOK_CONFIG,
  EventsConfig,
  Limits,
  ProofsConfig,
  type ProofsConfigShape,
  SessionAuthenticator,
  WebhookConfig,
  type WebhookConfigShape
} from "@mzk/core"
import { Layer } from "effect"
import { storageLayer } from "./database.js"
import { NodeEntropy } from "./entropy.js"
import { NodeApiKeyHashing } from "./keyHashing.js"
import type { MzkOptions } from "./options.js"

/** `partial` over `defaults`, its `undefined` values left out (a setting not given keeps its default). */
export const over = <A extends object>(defaults: A, partial: Partial<A> | undefined): A => ({
  ...defaults,
  ...Object.fromEntries(Object.entries(partial ?? {}).filter(([, value]) => value !== undefined))
})

/** The proofs' settings: ProofsConfig here, and the prover's per-proof limit in the composition root. */
export const proofsConfigOf = (options: MzkOptions): ProofsConfigShape => over(DEFAULT_PROOFS_CONFIG, options.proofs)

const webhookConfig = (options: MzkOptions): WebhookConfigShape => {
  const config = over(DEFAULT_WEBHOOK_CONFIG, { ...options.webhooks, allowInsecureWebhooks: options.allowInsecureWebhooks ?? false })
  // A claim must outlast an attempt plus its bookkeeping, or a slow attempt would be sent twice.
  return { ...config, leaseMs: Math.max(config.leaseMs, config.timeoutMs + 30_000) }
}

/**
 * What every part of the core stands on, whatever the process proves: the options' settings, the
 * chosen storage, the OS's randomness, key hashing and the session check. The composition root
 * (`CoreServicesLive` in mzk.ts) builds the core over it; this module reads none of the circuits, the
 * prover or the HTTP stack, so the commands that only touch accounts and keys start quickly.
 */
export const FoundationLive = (options: MzkOptions) =>
  storageLayer(options.database).pipe(
    Layer.provideMerge(Layer.succeed(WebhookConfig, webhookConfig(options))),
    Layer.provideMerge(Layer.succeed(ProofsConfig, proofsConfigOf(options))),
    Layer.provideMerge(Layer.succeed(EventsConfig, over(DEFAULT_EVENTS_CONFIG, options.events))),
    Layer.provideMerge(Layer.succeed(AuditConfig, over(DEFAULT_AUDIT_CONFIG, options.audit))),
    Layer.provideMerge(Layer.succeed(Limits, over(DEFAULT_LIMITS, options.limits))),
    Layer.provideMerge(NodeEntropy),
    Layer.provideMerge(NodeApiKeyHashing),
    Layer.provideMerge(options.sessions ?? SessionAuthenticator.none)
  )

/**
 * Accounts and API keys over the foundation, and nothing else: `mzk accounts create`, `mzk keys …`.
 * Without Postgres's cross-process wakeups (`CoreServicesLive` has them): a delivery of an event these
 * commands record is picked up by the workers' next poll, not at once.
 */
export const AccountServicesLive = (options: MzkOptions) => AccountServices.pipe(Layer.provideMerge(FoundationLive(options)))
