import { RateLimitsRepo } from "@mzk/core"
import { Effect } from "effect"
import type { SqlConnection } from "../connection.js"

/**
 * All-or-nothing over several counters without savepoints: make sure each row exists, lock the
 * rows in bucket order (a fixed order, so two requests never wait on each other in a cycle), decide
 * in code, then write. A refused request writes nothing, so it may run inside a caller's transaction.
 */
export const sqlRateLimits = (conn: SqlConnection) =>
  RateLimitsRepo.of({
    consume: (buckets) =>
      conn.transaction(Effect.gen(function*() {
        const names = [...new Set(buckets.map((b) => b.bucket))].sort()
        yield* conn.execute((db) =>
          db.insertInto("rate_counters").values(names.map((bucket) => ({ bucket, window_start: 0, count: 0 })))
            .onConflict((oc) => oc.column("bucket").doNothing())
        )
        const rows = yield* conn.rows((db) =>
          db.selectFrom("rate_counters").selectAll().where("bucket", "in", names).orderBy("bucket")
            .$if(conn.dialect === "postgres", (q) => q.forUpdate())
        )
        const stored = new Map(rows.map((row) => [row.bucket, { window_start: Number(row.window_start), count: row.count }]))
        const current = buckets.map((b) => {
          const row = stored.get(b.bucket)!
          // A caller whose clock lags another process's counts against the newer window.
          return row.window_start >= b.window_start ? row.count : 0
        })
        const admitted = buckets.every((b, i) => current[i]! + b.cost <= b.limit)
        if (!admitted) return { admitted, counts: current }
        const counts: Array<number> = []
        for (const [i, b] of buckets.entries()) {
          const count = current[i]! + b.cost
          counts.push(count)
          const windowStart = Math.max(b.window_start, stored.get(b.bucket)!.window_start)
          yield* conn.execute((db) =>
            db.updateTable("rate_counters").set({ window_start: windowStart, count }).where("bucket", "=", b.bucket)
          )
        }
        return { admitted, counts }
      }))
  })
