import type { SqlConnection, WorkKind } from "@mzk/adapters-sql"
import { CircuitBuildWakeup, DeliveryWakeup, ProofCancelWakeup, ProofWakeup, RecoveryWakeup, type StorageError, type Wakeup } from "@mzk/core"
import { Effect, Layer, Runtime, Schedule } from "effect"
import { sql } from "kysely"
import pg from "pg"
import { pgConnectionString } from "./connectionString.js"

/** The channel each kind of work is announced on: NOTIFY below, LISTEN in `PostgresWakeups`. */
export const WORK_CHANNELS: Readonly<Record<WorkKind, string>> = {
  proofs: "mzk_proofs",
  deliveries: "mzk_deliveries",
  circuits: "mzk_circuits",
  canceledProofs: "mzk_canceled_proofs",
  recoveries: "mzk_recoveries"
}

/**
 * `SqlDialect.announce`: a NOTIFY on the work's channel. Postgres delivers a notice sent inside a
 * transaction only when it commits, and never when it rolls back.
 */
export const notifyWork = (conn: SqlConnection, work: WorkKind): Effect.Effect<void, StorageError> =>
  Effect.asVoid(conn.query((db) => sql`select pg_notify(${WORK_CHANNELS[work]}, '')`.execute(db)))

/**
 * Wakes this process's idle loops when another process writes work: a dedicated connection
 * LISTENs on the channels the repositories NOTIFY (at commit) when they insert proofs,
 * deliveries, circuits to build or webhook recoveries, or cancel running proofs, and turns each
 * notice into the local nudge (a cancel's wakes the proof worker's check of its claims). Polling stays as the fallback, so a
 * lost connection only costs latency; it is re-opened every second until it holds again.
 */
export const PostgresWakeups = (
  options: { readonly connectionString: string }
): Layer.Layer<never, never, ProofWakeup | ProofCancelWakeup | DeliveryWakeup | CircuitBuildWakeup | RecoveryWakeup> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const wakeups: Readonly<Record<WorkKind, Wakeup>> = {
      proofs: yield* ProofWakeup,
      deliveries: yield* DeliveryWakeup,
      circuits: yield* CircuitBuildWakeup,
      canceledProofs: yield* ProofCancelWakeup,
      recoveries: yield* RecoveryWakeup
    }
    const byChannel = new Map(Object.entries(WORK_CHANNELS).map(([work, channel]) => [channel, wakeups[work as WorkKind]]))
    const run = Runtime.runFork(yield* Effect.runtime<never>())

    // The loss is watched from before `connect`, so a connection dropped while the channels are
    // being subscribed (or between subscribing and waiting) is seen, never an uncaught "error".
    const listen = Effect.acquireRelease(
      Effect.sync(() => {
        const client = new pg.Client({ connectionString: pgConnectionString(options.connectionString) })
        const lost = new Promise<Error>((resolve) => {
          client.on("error", resolve)
          client.on("end", () => resolve(new Error("LISTEN connection ended")))
        })
        client.on("notification", (notice) => {
          const wakeup = byChannel.get(notice.channel)
          if (wakeup !== undefined) run(wakeup.notify)
        })
        return { client, lost }
      }),
      ({ client }) => Effect.promise(() => client.end().catch(() => undefined))
    )

    const holdUntilLost = Effect.scoped(Effect.flatMap(listen, ({ client, lost }) =>
      Effect.tryPromise({
        try: async () => {
          await client.connect()
          for (const channel of Object.values(WORK_CHANNELS)) await client.query(`listen ${channel}`)
          throw await lost
        },
        catch: (cause) => cause instanceof Error ? cause : new Error(String(cause))
      })))

    yield* holdUntilLost.pipe(
      Effect.tapError((error) => Effect.logWarning("Postgres LISTEN connection lost; polling until it is back", error.message)),
      Effect.retry(Schedule.spaced("1 second")),
      Effect.forkScoped
    )
  }))
