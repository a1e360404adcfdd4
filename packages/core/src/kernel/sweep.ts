import { Effect, type Scope } from "effect"

/**
 * A retention or expiry sweep as a background fiber of the current scope: one sweep at once, then
 * one every `intervalMs`. A sweep that fails is logged and tried again at the next interval; what
 * it would have removed waits until then, nothing else does.
 */
export const sweepForever = <R>(
  name: string,
  sweep: Effect.Effect<unknown, unknown, R>,
  intervalMs: number
): Effect.Effect<void, never, R | Scope.Scope> =>
  sweep.pipe(
    Effect.catchAllCause((cause) => Effect.logError(`${name} failed`, cause)),
    Effect.zipRight(Effect.sleep(intervalMs)),
    Effect.forever,
    Effect.forkScoped,
    Effect.asVoid
  )
