import { DEFAULT_WEBHOOK_CONFIG, nextDeliveryState, type Timestamp, timestampFromMillis } from "@mzk/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const SCHEDULE = DEFAULT_WEBHOOK_CONFIG.retryScheduleMs
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0)
const at = (ms: number) => timestampFromMillis(ms)

describe("nextDeliveryState", () => {
  it("a 2xx settles the delivery, keeping when it first failed", () => {
    expect(nextDeliveryState({ first_failed_at: null }, 1, true, T0, SCHEDULE)).toEqual({
      status: "succeeded",
      next_attempt_at: null,
      first_failed_at: null,
      disables_webhook: false
    })
    expect(nextDeliveryState({ first_failed_at: at(T0) }, 3, true, T0 + 400_000, SCHEDULE).first_failed_at).toBe(at(T0))
  })

  it("failures are retried 30 s, 5 min, 30 min, 2 h and 8 h after the first failure, then the delivery fails", () => {
    let first: Timestamp | null = null
    const due: Array<string | null> = []
    let endMs = T0
    for (let attempt = 1; attempt <= 6; attempt++) {
      const next = nextDeliveryState({ first_failed_at: first }, attempt, false, endMs, SCHEDULE)
      first = next.first_failed_at
      due.push(next.status === "pending" ? next.next_attempt_at : next.status)
      // Each retry is made when due and takes 2 s to fail.
      if (next.next_attempt_at !== null) endMs = Date.parse(next.next_attempt_at) + 2_000
    }
    expect(first).toBe(at(T0))
    expect(due).toEqual([at(T0 + 30_000), at(T0 + 300_000), at(T0 + 1_800_000), at(T0 + 7_200_000), at(T0 + 28_800_000), "failed"])
  })

  it("only the failure that spends the schedule disables the webhook", () => {
    const disables = [1, 2, 3, 4, 5, 6].map((attempt) => nextDeliveryState({ first_failed_at: at(T0) }, attempt, false, T0, SCHEDULE).disables_webhook)
    expect(disables).toEqual([false, false, false, false, false, true])
  })

  it("a manual attempt settles the delivery either way, without a retry and without disabling the webhook", () => {
    // Attempt 7 of a delivery whose schedule was spent, and attempt 2 of one still early in it.
    for (const attempt of [7, 2]) {
      const failed = nextDeliveryState({ first_failed_at: at(T0), trigger: "manual" }, attempt, false, T0 + 9 * 3_600_000, SCHEDULE)
      expect(failed).toEqual({ status: "failed", next_attempt_at: null, first_failed_at: at(T0), disables_webhook: false })
      const succeeded = nextDeliveryState({ first_failed_at: at(T0), trigger: "manual" }, attempt, true, T0, SCHEDULE)
      expect(succeeded).toEqual({ status: "succeeded", next_attempt_at: null, first_failed_at: at(T0), disables_webhook: false })
    }
    // A manual attempt that fails first leaves no first failure to schedule from.
    expect(nextDeliveryState({ first_failed_at: null, trigger: "manual" }, 1, false, T0, SCHEDULE).first_failed_at).toBeNull()
  })

  it("a retry is never due before the attempt that failed ended", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: SCHEDULE.length }),
      fc.integer({ min: 0, max: 10 * 3_600_000 }),
      (attempt, lateBy) => {
        const endMs = T0 + lateBy
        const next = nextDeliveryState({ first_failed_at: at(T0) }, attempt, false, endMs, SCHEDULE)
        expect(next.status).toBe("pending")
        expect(Date.parse(next.next_attempt_at!)).toBe(Math.max(T0 + SCHEDULE[attempt - 1]!, endMs))
      }
    ))
  })
})
