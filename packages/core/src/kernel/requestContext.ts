import { Effect, FiberRef, GlobalValue } from "effect"
import type { Principal } from "./principal.js"

/**
 * Who acts, as the audit log names it: an API key (its id), a session of the embedding application
 * (the id its `SessionAuthenticator` gave, else null), the `mzk` command line, or mzk itself.
 */
export interface Actor {
  readonly type: "api_key" | "session" | "cli" | "system"
  readonly id: string | null
}

/**
 * What the core may know of the request it serves, built once by whoever takes the request (the
 * HTTP pipeline's `requestContext` stage, the CLI for its commands) and read deep inside the
 * services (`AuditLog.record`). It is about the request, not about the operation, so it is not
 * threaded through every service's arguments; the account a service acts on still is.
 */
export interface RequestContext {
  readonly actor: Actor
  readonly request_id: string | null
  /** The client's address, as the trusted proxies reported it. */
  readonly client_address: string | null
  readonly user_agent: string | null
  readonly idempotency_key: string | null
}

export const SYSTEM_ACTOR: Actor = { type: "system", id: null }
export const CLI_ACTOR: Actor = { type: "cli", id: null }

/** The context of work no request asked for (a loop, a sweeper), and of the core called without one. */
export const outsideRequest = (actor: Actor): RequestContext => ({ actor, request_id: null, client_address: null, user_agent: null, idempotency_key: null })

const SYSTEM = outsideRequest(SYSTEM_ACTOR)

/**
 * The current fiber's request context, scoped with `Effect.locally`. A FiberRef rather than a
 * service provided per request: providing a service copies the whole context (every service of
 * the process), which cost POST /proofs about 20 µs of CPU a request (measured; see
 * docs/architecture.md), where `locally` sets one reference.
 */
const CurrentRequest: FiberRef.FiberRef<RequestContext> = GlobalValue.globalValue(
  Symbol.for("@mzk/core/RequestContext"),
  () => FiberRef.unsafeMake<RequestContext>(SYSTEM)
)

/** The request context of the current fiber (mzk itself, `system`, where none was set). */
export const currentRequest: Effect.Effect<RequestContext> = FiberRef.get(CurrentRequest)

/** Runs `effect` as part of the request `context`. */
export const withRequestContext = (context: RequestContext) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, CurrentRequest, context)

/** Runs `effect` as done by `actor` outside any request (the CLI, an embedder's own code). */
export const auditedAs = (actor: Actor) => withRequestContext(outsideRequest(actor))

/** The actor of an authenticated principal: its key, or its session (with the id the embedder gave it). */
export const actorOf = (principal: Principal): Actor =>
  principal.via.kind === "api_key"
    ? { type: "api_key", id: principal.via.key_id }
    : { type: "session", id: principal.via.actor_id ?? null }

/**
 * Runs `effect` as done by `principal` outside an HTTP request: an embedder's own call on behalf of
 * one of its keys or sessions, so the key's per-minute rate limit and the audit log see who acts.
 */
export const actingFor = (principal: Principal) => auditedAs(actorOf(principal))
