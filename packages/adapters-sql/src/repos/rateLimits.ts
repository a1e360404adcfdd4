import { RateLimitsRepo, type StorageError } from "@mzk/core"
import { Effect } from "effect"
import type { SqlConnection } from "../connection.js"

/**
 * All-or-nothing over several counters without savepoints: lock the rows in bucket order (a fixed
 * order, so two requests never wait on each other in a cycle), creating any that are missing first,
 * decide in code, then write. A refused request writes nothing (beyond creating its empty counters),
 * so it may run inside a caller's transaction.
 */
export const sqlRateLimits = (conn: SqlConnection) => {
  const update = conn.statement((db, $: { bucket: string; window_start: number; count: number }) =>
    db.updateTable("rate_counters").set({ window_start: $.window_start, count: $.count }).where("bucket", "=", $.bucket)
  )
  /** The statements for `n` buckets (`b0`, `b1`, …), made once per count: requests charge one or two. */
  const forCount = new Map<number, ReturnType<typeof statementsFor>>()
  const statementsFor = (n: number) => {
    const names = Array.from({ length: n }, (_, i) => `b${i}`)
    type Names = Record<string, string>
    return {
      names,
      ensure: conn.statement((db, $: Names) =>
        db.insertInto("rate_counters").values(names.map((name) => ({ bucket: $[name]!, window_start: 0, count: 0 })))
          .onConflict((oc) => oc.column("bucket").doNothing())
      ),
      lock: conn.statement((db, $: Names) =>
        db.selectFrom("rate_counters").selectAll().where("bucket", "in", names.map((name) => $[name]!)).orderBy("bucket")
          .$call(conn.dialect.lockRows)
      )
    }
  }

  // Every metered request charges here: plain steps rather than a generator.
  return RateLimitsRepo.of({
    consume: (buckets) => {
      const sorted = [...new Set(buckets.map((b) => b.bucket))].sort()
      let statements = forCount.get(sorted.length)
      if (statements === undefined) forCount.set(sorted.length, statements = statementsFor(sorted.length))
      const { ensure, lock, names } = statements
      const params = Object.fromEntries(names.map((name, i) => [name, sorted[i]!]))
      const charge = (rows: ReadonlyArray<{ readonly bucket: string; readonly window_start: number | string; readonly count: number }>) => {
        const stored = new Map(rows.map((row) => [row.bucket, { window_start: Number(row.window_start), count: row.count }]))
        // A caller whose clock lags another process's counts against the newer window.
        const current = buckets.map((b) => (stored.get(b.bucket)!.window_start >= b.window_start ? stored.get(b.bucket)!.count : 0))
        if (!buckets.every((b, i) => current[i]! + b.cost <= b.limit)) return Effect.succeed({ admitted: false, counts: current })
        const counts = buckets.map((b, i) => current[i]! + b.cost)
        const writes = buckets.reduce<Effect.Effect<unknown, StorageError>>((done, b, i) =>
          Effect.zipRight(done, update.execute({
            bucket: b.bucket,
            window_start: Math.max(b.window_start, stored.get(b.bucket)!.window_start),
            count: counts[i]!
          })), Effect.void)
        return Effect.as(writes, { admitted: true, counts })
      }
      // The counters exist after a bucket's first request: lock them, and create them only if missing.
      const created = ensure.execute(params).pipe(Effect.zipRight(lock.rows(params)), Effect.flatMap(charge))
      return conn.transaction(Effect.flatMap(lock.rows(params), (rows) => (rows.length === sorted.length ? charge(rows) : created)))
    },
    peek: (buckets) =>
      buckets.length === 0
        ? Effect.succeed([])
        : Effect.map(
          conn.rows((db) => db.selectFrom("rate_counters").selectAll().where("bucket", "in", buckets.map((b) => b.bucket))),
          (rows) => {
            const stored = new Map(rows.map((row) => [row.bucket, row]))
            return buckets.map((b) => {
              const row = stored.get(b.bucket)
              return row !== undefined && Number(row.window_start) >= b.window_start ? row.count : 0
            })
          }
        ),
    // One conditional write per counter: the window must still be the one charged, the count stays >= 0.
    refund: (refunds) =>
      Effect.forEach(refunds, ({ amount, bucket, window_start }) =>
        conn.execute((db) =>
          db.updateTable("rate_counters")
            .set((eb) => ({ count: eb.case().when("count", ">", amount).then(eb("count", "-", amount)).else(0).end() }))
            .where("bucket", "=", bucket).where("window_start", "=", window_start)
        ), { discard: true })
  })
}
