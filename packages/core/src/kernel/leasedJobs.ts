import { Clock, Effect, FiberSet, type Scope } from "effect"
import type { StorageError } from "./errors.js"
import { type Timestamp, timestampFromMillis } from "./time.js"
import type { Wakeup } from "./wakeup.js"

/** What a claim asks storage for: up to `limit` jobs, each leased until `leaseUntil`. */
export interface LeaseRequest {
  readonly now: Timestamp
  readonly leaseUntil: Timestamp
  readonly limit: number
}

export interface LeasedJobs<J> {
  /** For logs: "proof worker", "circuit builds". */
  readonly name: string
  /** Jobs this process runs at once; it never claims more, so a claimed job starts at once. */
  readonly capacity: number
  /** How long a claim holds: a job's time limit plus a margin. */
  readonly leaseMs: number
  readonly pollIntervalMs: number
  readonly wakeup: Wakeup
  readonly claim: (request: LeaseRequest) => Effect.Effect<ReadonlyArray<J>, StorageError>
  /** Works on a claimed job and settles it; its failures are logged, and its lease then lapses. */
  readonly run: (job: J) => Effect.Effect<void, unknown>
  /** Hands an interrupted job back so any worker takes it at once. */
  readonly release: (job: J) => Effect.Effect<unknown, unknown>
  /** For logs: "proof proof_…". */
  readonly describe: (job: J) => string
}

/**
 * The loop behind every job queue in storage (proofs, circuit builds): claim what fits, run each
 * claimed job in its own fiber, and wait for a nudge or the poll interval when there is nothing
 * to claim. Storage's claims carry a lease, so a job of a worker that dies is taken over when its
 * lease lapses; a worker that stops on purpose hands its jobs back instead.
 */
export const runLeasedJobs = <J>(jobs: LeasedJobs<J>): Effect.Effect<{ readonly inFlight: Effect.Effect<number> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const capacity = Math.max(1, jobs.capacity)
    let inFlight = 0
    // Made before the claim loop is forked, so on shutdown the loop stops first and only then are
    // the running jobs interrupted (and handed back): none is claimed after the hand-back.
    const running = yield* FiberSet.make<void>()

    const run = (job: J) =>
      jobs.run(job).pipe(
        Effect.onInterrupt(() =>
          jobs.release(job).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`${jobs.describe(job)} could not be handed back; its lease will lapse`, cause))
          )
        ),
        // A storage failure leaves the job claimed; its lease lapses and a worker retries it.
        Effect.catchAllCause((cause) => Effect.logError(`${jobs.describe(job)} could not be settled`, cause)),
        Effect.ensuring(Effect.zipRight(Effect.sync(() => void inFlight--), jobs.wakeup.notify))
      )

    /**
     * Claims what fits; true when it may be worth claiming again at once. Claiming and starting
     * are not interrupted in between, so no claimed job is left without a fiber to hand it back.
     */
    const claimOnce = Effect.uninterruptible(Effect.gen(function*() {
      const free = capacity - inFlight
      if (free <= 0) return false
      const nowMs = yield* Clock.currentTimeMillis
      const claimed = yield* jobs.claim({
        now: timestampFromMillis(nowMs),
        leaseUntil: timestampFromMillis(nowMs + jobs.leaseMs),
        limit: free
      })
      inFlight += claimed.length
      for (const job of claimed) yield* FiberSet.run(running, Effect.interruptible(run(job)))
      return claimed.length === free
    }))

    const idle = Effect.raceFirst(jobs.wakeup.take, Effect.sleep(jobs.pollIntervalMs))

    yield* Effect.gen(function*() {
      const more = yield* claimOnce.pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError(`${jobs.name}: claim failed`, cause), false))
      )
      if (!more) yield* idle
    }).pipe(Effect.forever, Effect.forkScoped)

    return { inFlight: Effect.sync(() => inFlight) }
  })
