import { Clock, Effect } from "effect"

/**
 * What the build process reports while it makes the development powers of tau (`buildJob.mjs`'s
 * `progress`): it starts, each step of its one-contribution ceremony starts and finishes, it is done.
 */
export type PtauProgress =
  | { readonly event: "start"; readonly power: number; readonly file: string; readonly steps: number }
  | {
    readonly event: "step"
    readonly step: string
    readonly index: number
    readonly of: number
    readonly state: "started" | "finished"
  }
  | { readonly event: "done"; readonly power: number; readonly file: string; readonly bytes: number }

/**
 * Logs one generation's progress through the server's logger, timed by Effect's `Clock` here in
 * the parent (the child has neither): a line at the start (power, path), at each step's start and
 * end (the step's own time and the time so far), and at the end (the file's size, the total time).
 * Making one takes minutes at power 12 and more above, once, while circom uploads wait for it: the
 * operator sees it move instead of a server that seems stuck.
 */
export const makePtauProgressLog = () => {
  let startedAt: number | undefined
  let stepStartedAt: number | undefined
  return (progress: PtauProgress): Effect.Effect<void> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const elapsed = now - (startedAt ?? now)
      switch (progress.event) {
        case "start":
          startedAt = now
          return yield* Effect.logInfo(
            `development powers of tau: making power ${progress.power} (one local contribution, ${progress.steps} steps; minutes at power 12 and above)`
          ).pipe(Effect.annotateLogs({ ptau_power: progress.power, path: progress.file }))
        case "step":
          if (progress.state === "started") {
            stepStartedAt = now
            return yield* Effect.logInfo(`development powers of tau: step ${progress.index} of ${progress.of}, ${progress.step}`).pipe(
              Effect.annotateLogs({ step: progress.step, elapsed_ms: elapsed })
            )
          }
          return yield* Effect.logInfo(`development powers of tau: step ${progress.index} of ${progress.of}, ${progress.step}, done`).pipe(
            Effect.annotateLogs({ step: progress.step, step_ms: now - (stepStartedAt ?? now), elapsed_ms: elapsed })
          )
        case "done":
          return yield* Effect.logInfo(`development powers of tau: power ${progress.power} ready`).pipe(
            Effect.annotateLogs({ ptau_power: progress.power, path: progress.file, bytes: progress.bytes, total_ms: elapsed })
          )
      }
    })
}
