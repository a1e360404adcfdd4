import { Effect, FiberRef, GlobalValue } from "effect"
import type { Principal } from "../kernel/principal.js"
import type { AuditActor } from "./entry.js"

/** Who is making a change and from where. */
export interface AuditContextShape {
  readonly actor: AuditActor
  readonly request_id: string | null
  readonly ip_address: string | null
  readonly user_agent: string | null
}

/**
 * The `AuditContextShape` of the changes the current fiber makes, for the audit entries they
 * write: set by whoever takes the request (the HTTP dispatcher for every authenticated request
 * that may change something, the CLI for its commands), read by `AuditLog.record` deep inside the
 * services. It is about the request, not about the operation, so it is not threaded through every
 * service's arguments. A FiberRef rather than a service in the context: providing a service copies
 * the whole context, which cost POST /proofs about 20 µs of CPU a request (measured); a FiberRef
 * is scoped with `Effect.locally` for a fraction of that. Where none is set the actor is `system`.
 */
export const AuditContext: FiberRef.FiberRef<AuditContextShape | undefined> = GlobalValue.globalValue(
  Symbol.for("@mzk/core/AuditContext"),
  () => FiberRef.unsafeMake<AuditContextShape | undefined>(undefined)
)

export const SYSTEM_ACTOR: AuditActor = { type: "system", id: null }
export const CLI_ACTOR: AuditActor = { type: "cli", id: null }

/** The audit actor of an authenticated principal: its key, or its session (with the id the embedder gave it). */
export const actorOf = (principal: Principal): AuditActor =>
  principal.via.kind === "api_key"
    ? { type: "api_key", id: principal.via.key_id }
    : { type: "session", id: principal.via.actor_id ?? null }

/** Runs `effect` with its changes audited as made in `context` (who, and from where). */
export const withAuditContext = (context: AuditContextShape) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, AuditContext, context)

/** Runs `effect` with its changes audited as made by `actor` outside any request (the CLI, an embedder's own code). */
export const auditedAs = (actor: AuditActor) => withAuditContext({ actor, request_id: null, ip_address: null, user_agent: null })
