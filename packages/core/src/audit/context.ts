import { Context, Effect } from "effect"
import type { Principal } from "../kernel/principal.js"
import type { AuditActor } from "./entry.js"

/**
 * Who is making a change and from where, for the audit entries the change writes: provided by
 * whoever takes the request (the HTTP dispatcher for every authenticated request, the CLI for its
 * commands), read by `AuditLog.record` deep inside the services. Carried in the context rather than
 * through every service's arguments because it is about the request, not about the operation, as
 * the platform's own `HttpServerRequest` is. Where none is provided the actor is `system`.
 */
export class AuditContext extends Context.Tag("@mzk/core/AuditContext")<AuditContext, {
  readonly actor: AuditActor
  readonly request_id: string | null
  readonly ip_address: string | null
  readonly user_agent: string | null
}>() {}

export const SYSTEM_ACTOR: AuditActor = { type: "system", id: null }
export const CLI_ACTOR: AuditActor = { type: "cli", id: null }

/** The audit actor of an authenticated principal: its key, or its session (with the id the embedder gave it). */
export const actorOf = (principal: Principal): AuditActor =>
  principal.via.kind === "api_key"
    ? { type: "api_key", id: principal.via.key_id }
    : { type: "session", id: principal.via.actor_id ?? null }

/** Runs `effect` with its changes audited as made by `actor` outside any request (the CLI, an embedder's own code). */
export const auditedAs = (actor: AuditActor) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, AuditContext>> =>
  Effect.provideService(effect, AuditContext, { actor, request_id: null, ip_address: null, user_agent: null })
