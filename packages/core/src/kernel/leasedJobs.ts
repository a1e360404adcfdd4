import { Clock, Effect, Fiber, FiberSet, Queue, type Scope } from "effect"
import type { StorageError } from "./errors.js"
import { logFailure } from "./storageFailure.js"
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
  /**
   * Awaited (interruptibly, in the loop) before the first claim: what a job needs to start at
   * once, such as the prover's threads, so that no claimed job waits for it and its times and
   * time limit count the job alone.
   */
  readonly ready?: Effect.Effect<void>
  readonly claim: (request: LeaseRequest) => Effect.Effect<ReadonlyArray<J>, StorageError>
  /** Works on a claimed job and settles it; its failures are logged, and its lease then lapses. */
  readonly run: (job: J) => Effect.Effect<void, unknown>
  /** Hands an interrupted job back so any worker takes it at once. */
  readonly release: (job: J) => Effect.Effect<unknown, unknown>
  /** For logs: "proof proof_…". */
  readonly describe: (job: J) => string
  /**
   * Keeps the running jobs honest: while any run, every `intervalMs` (at once on a `wakeup` nudge)
   * `lost` names those whose claim is no longer this process's (the job was canceled, or taken
   * over after its lease lapsed), and their fibers are interrupted. Without it a job runs to its end.
   */
  readonly watch?: {
    readonly lost: (jobs: ReadonlyArray<J>) => Effect.Effect<ReadonlyArray<J>, StorageError>
    readonly intervalMs: number
    readonly wakeup: Wakeup
  }
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
    /** Each running job's fiber, for the watch to stop. */
    const held = new Map<J, Fiber.RuntimeFiber<void>>()
    /** A job started: the watch, idle while none runs, starts watching. */
    const started = yield* Queue.sliding<void>(1)

    const run = (job: J) =>
      jobs.run(job).pipe(
        Effect.onInterrupt(() =>
          jobs.release(job).pipe(
            Effect.catchAllCause((cause) => logFailure(`${jobs.describe(job)} could not be handed back; its lease will lapse`, cause, { level: "Warning" }))
          )
        ),
        // A storage failure leaves the job claimed; its lease lapses and a worker retries it.
        Effect.catchAllCause((cause) => logFailure(`${jobs.describe(job)} could not be settled`, cause)),
        Effect.ensuring(Effect.zipRight(Effect.sync(() => void inFlight--), jobs.wakeup.notify))
      )

    /** `run`, its fiber known to the watch while it runs. */
    const tracked = (job: J) =>
      Effect.withFiberRuntime<void>((fiber) => {
        held.set(job, fiber)
        return Effect.ensuring(run(job), Effect.sync(() => void held.delete(job)))
      })

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
      for (const job of claimed) yield* FiberSet.run(running, Effect.interruptible(tracked(job)))
      if (claimed.length > 0) yield* Queue.offer(started, undefined)
      return claimed.length === free
    }))

    const idle = Effect.raceFirst(jobs.wakeup.take, Effect.sleep(jobs.pollIntervalMs))

    yield* Effect.gen(function*() {
      const more = yield* claimOnce.pipe(
        Effect.catchAllCause((cause) => Effect.as(logFailure(`${jobs.name}: claim failed`, cause), false))
      )
      if (!more) yield* idle
    }).pipe(Effect.forever, (loop) => (jobs.ready === undefined ? loop : Effect.zipRight(jobs.ready, loop)), Effect.forkScoped)

    // Forked after the running jobs' set is made, so on shutdown it stops before they are handed back.
    if (jobs.watch !== undefined) yield* watchClaims(jobs, jobs.watch, held, Queue.take(started))

    return { inFlight: Effect.sync(() => inFlight) }
  })

/**
 * The watch of `LeasedJobs.watch`. With no job running it waits for one to start, so an idle worker
 * neither reads storage nor wakes on the clock; while jobs run it checks every `intervalMs`, or at
 * once when nudged, and interrupts the fibers of the jobs it no longer holds. An interrupted job is
 * handed back as on shutdown; that write is conditional on the claim, so for a lost one it does nothing.
 */
const watchClaims = <J>(
  jobs: LeasedJobs<J>,
  watch: NonNullable<LeasedJobs<J>["watch"]>,
  held: Map<J, Fiber.RuntimeFiber<void>>,
  jobStarted: Effect.Effect<void>
) => {
  const stop = (job: J) => {
    const fiber = held.get(job)
    if (fiber === undefined) return Effect.void
    return Effect.zipRight(
      Effect.logInfo(`${jobs.describe(job)} stopped: this worker no longer holds it (canceled, or taken over)`),
      Fiber.interrupt(fiber)
    )
  }
  const check = Effect.suspend(() => {
    if (held.size === 0) return Effect.void
    return Effect.flatMap(watch.lost([...held.keys()]), (lost) => Effect.forEach(lost, stop, { concurrency: "unbounded", discard: true }))
  }).pipe(Effect.catchAllCause((cause) => logFailure(`${jobs.name}: checking its claims failed`, cause)))
  const step = Effect.suspend(() =>
    held.size === 0 ? jobStarted : Effect.zipRight(Effect.raceFirst(watch.wakeup.take, Effect.sleep(watch.intervalMs)), check)
  )
  return Effect.forkScoped(Effect.forever(step))
}
