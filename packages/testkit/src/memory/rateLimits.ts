import { RateLimitsRepo } from "@mzk/core"
import { Effect } from "effect"
import type { MemoryDb } from "./db.js"

interface Counter {
  readonly id: string
  readonly window_start: number
  readonly count: number
}

export const memoryRateLimits = (db: MemoryDb) => {
  const counters = db.table<Counter>("rate_counters")
  return RateLimitsRepo.of({
    consume: (buckets) =>
      db.write(Effect.gen(function*() {
        const stored = buckets.map((b) => counters.get(b.bucket))
        // A caller whose clock lags another process's counts against the newer window.
        const current = buckets.map((b, i) => (stored[i] !== undefined && stored[i].window_start >= b.window_start ? stored[i].count : 0))
        yield* Effect.yieldNow()
        const admitted = buckets.every((b, i) => current[i]! + b.cost <= b.limit)
        if (!admitted) return { admitted, counts: current }
        const counts = buckets.map((b, i) => {
          const count = current[i]! + b.cost
          counters.set(b.bucket, { id: b.bucket, window_start: Math.max(b.window_start, stored[i]?.window_start ?? 0), count })
          return count
        })
        return { admitted, counts }
      })),
    refund: (refunds) =>
      db.write(Effect.sync(() => {
        for (const { amount, bucket, window_start } of refunds) {
          const stored = counters.get(bucket)
          if (stored === undefined || stored.window_start !== window_start) continue
          counters.set(bucket, { ...stored, count: Math.max(0, stored.count - amount) })
        }
      }))
  })
}
