import { DEFAULT_WEBHOOK_CONFIG, nextDeliveryState, retryAfterMillis, type Timestamp, timestampFromMillis } from "@mzk/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const SCHEDULE = DEFAULT_WEBHOOK_CONFIG.retryScheduleMs
const T0 = Date.UTC(2026, 10, 23, 12, 0, 0)
const at = (ms: number) => timestampFromMillis(ms)

describe("nextDeliveryState", () => {
  it("a 2xx settles the delivery, keeping when it first failed", () => {
    expect(nextDeliveryState({ first_failed_at: null }, 1, { status: 200 }, T0, SCHEDULE)).toEqual({
      status: "succeeded",
      next_attempt_at: null,
      first_failed_at: null
    })
    expect(nextDeliveryState({ first_failed_at: at(T0) }, 3, { status: 204 }, T0 + 400_000, SCHEDULE).first_failed_at).toBe(at(T0))
  })

  it("failures are retried 30 s, 5 min, 30 min, 2 h and 8 h after the first failure, then the delivery fails", () => {
    let first: Timestamp | null = null
    const due: Array<string | null> = []
    let endMs = T0
    for (let attempt = 1; attempt <= 6; attempt++) {
      const next = nextDeliveryState({ first_failed_at: first }, attempt, { status: attempt % 2 === 0 ? 500 : null }, endMs, SCHEDULE)
      first = next.first_failed_at
      due.push(next.status === "pending" ? next.next_attempt_at : next.status)
      // Each retry is made when due and takes 2 s to fail.
      if (next.next_attempt_at !== null) endMs = Date.parse(next.next_attempt_at) + 2_000
    }
    expect(first).toBe(at(T0))
    expect(due).toEqual([at(T0 + 30_000), at(T0 + 300_000), at(T0 + 1_800_000), at(T0 + 7_200_000), at(T0 + 28_800_000), "failed"])
    const last = nextDeliveryState({ first_failed_at: at(T0) }, 6, { status: 500 }, T0 + 28_800_000, SCHEDULE)
    expect(last).toEqual({ status: "failed", next_attempt_at: null, first_failed_at: at(T0), disabled_reason: "delivery_failures" })
  })

  it("a manual attempt settles the delivery either way, without a retry and without disabling the webhook, unless the endpoint is gone", () => {
    // Attempt 7 of a delivery whose schedule was spent, and attempt 2 of one still early in it.
    for (const attempt of [7, 2]) {
      for (const answer of [{ status: 500 }, { status: null }, { status: 503, retryAfter: "120" }]) {
        const failed = nextDeliveryState({ first_failed_at: at(T0), trigger: "manual" }, attempt, answer, T0 + 9 * 3_600_000, SCHEDULE)
        expect(failed).toEqual({ status: "failed", next_attempt_at: null, first_failed_at: at(T0) })
      }
      const succeeded = nextDeliveryState({ first_failed_at: at(T0), trigger: "manual" }, attempt, { status: 200 }, T0, SCHEDULE)
      expect(succeeded).toEqual({ status: "succeeded", next_attempt_at: null, first_failed_at: at(T0) })
    }
    // A manual attempt that fails first leaves no first failure to schedule from.
    expect(nextDeliveryState({ first_failed_at: null, trigger: "manual" }, 1, { status: 500 }, T0, SCHEDULE).first_failed_at).toBeNull()
    // A 410 is the receiver saying it is gone for good: that holds whoever asked for the attempt.
    expect(nextDeliveryState({ first_failed_at: null, trigger: "manual" }, 1, { status: 410 }, T0, SCHEDULE).disabled_reason).toBe("endpoint_gone")
  })

  it("a retry is never due before the attempt that failed ended", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: SCHEDULE.length }),
      fc.integer({ min: 0, max: 10 * 3_600_000 }),
      (attempt, lateBy) => {
        const endMs = T0 + lateBy
        const next = nextDeliveryState({ first_failed_at: at(T0) }, attempt, { status: 500 }, endMs, SCHEDULE)
        expect(next.status).toBe("pending")
        expect(Date.parse(next.next_attempt_at!)).toBe(Math.max(T0 + SCHEDULE[attempt - 1]!, endMs))
      }
    ))
  })
})

/** After attempt `attempt` failed at `endMs` (first failure at T0) with `answer`: when the next one is due, as ms after T0. */
const dueAfter = (attempt: number, endMs: number, answer: { status: number | null; retryAfter?: string }) => {
  const next = nextDeliveryState({ first_failed_at: attempt === 1 ? null : at(T0) }, attempt, answer, endMs, SCHEDULE)
  return next.next_attempt_at === null ? next.status : Date.parse(next.next_attempt_at) - T0
}
const httpDate = (ms: number) => new Date(ms).toUTCString()

describe("receivers' signals", () => {
  it("a 410 Gone fails the delivery at once and disables the webhook as endpoint_gone, on any attempt", () => {
    expect(nextDeliveryState({ first_failed_at: null }, 1, { status: 410 }, T0, SCHEDULE)).toEqual({
      status: "failed",
      next_attempt_at: null,
      first_failed_at: at(T0),
      disabled_reason: "endpoint_gone"
    })
    expect(nextDeliveryState({ first_failed_at: at(T0) }, 3, { status: 410, retryAfter: "60" }, T0 + 300_000, SCHEDULE)).toMatchObject({
      status: "failed",
      first_failed_at: at(T0),
      disabled_reason: "endpoint_gone"
    })
  })

  it("429 and 503 with Retry-After in seconds move the next attempt to when asked, up to when the retry after it is due", () => {
    // Attempt 1 failed at T0: the retry is due at +30 s; the one after it at +5 min.
    expect(dueAfter(1, T0, { status: 503, retryAfter: "120" })).toBe(120_000)
    expect(dueAfter(1, T0, { status: 429, retryAfter: "120" })).toBe(120_000)
    expect(dueAfter(1, T0, { status: 429, retryAfter: "300" })).toBe(300_000)
    expect(dueAfter(1, T0, { status: 429, retryAfter: "301" })).toBe(300_000)
    expect(dueAfter(1, T0, { status: 503, retryAfter: "86400" })).toBe(300_000)
    expect(dueAfter(1, T0, { status: 503, retryAfter: "9".repeat(400) })).toBe(300_000)
    // Attempt 3 (the 2nd retry, at +5 min) failed 2 s late: the next is due at +30 min, capped at +2 h.
    expect(dueAfter(3, T0 + 302_000, { status: 503, retryAfter: "3600" })).toBe(302_000 + 3_600_000)
    expect(dueAfter(3, T0 + 302_000, { status: 503, retryAfter: "36000" })).toBe(7_200_000)
    // The last retry (+8 h) keeps its time: nothing comes after it to bound it by.
    expect(dueAfter(5, T0 + 7_200_000, { status: 503, retryAfter: "43200" })).toBe(28_800_000)
  })

  it("never earlier than the schedule, and the wait asked for is reported", () => {
    expect(dueAfter(1, T0, { status: 429, retryAfter: "0" })).toBe(30_000)
    expect(dueAfter(1, T0, { status: 429, retryAfter: "10" })).toBe(30_000)
    expect(dueAfter(1, T0, { status: 503, retryAfter: httpDate(T0 - 3_600_000) })).toBe(30_000)
    expect(nextDeliveryState({ first_failed_at: null }, 1, { status: 429, retryAfter: "10" }, T0, SCHEDULE).retry_after_seconds).toBe(10)
    expect(nextDeliveryState({ first_failed_at: null }, 1, { status: 503, retryAfter: "86400" }, T0, SCHEDULE).retry_after_seconds).toBe(86_400)
    expect(nextDeliveryState({ first_failed_at: null }, 1, { status: 500 }, T0, SCHEDULE).retry_after_seconds).toBeUndefined()
  })

  it("an HTTP-date in each of its three formats is read", () => {
    const wanted = T0 + 200_000
    expect(new Date(wanted).toUTCString()).toBe("Mon, 23 Nov 2026 12:03:20 GMT")
    expect(dueAfter(1, T0, { status: 503, retryAfter: "Mon, 23 Nov 2026 12:03:20 GMT" })).toBe(200_000)
    expect(dueAfter(1, T0, { status: 503, retryAfter: "Monday, 23-Nov-26 12:03:20 GMT" })).toBe(200_000)
    expect(dueAfter(1, T0, { status: 503, retryAfter: "Mon Nov 23 12:03:20 2026" })).toBe(200_000)
  })

  it("a missing or unreadable Retry-After, or one on another status, changes nothing", () => {
    for (const retryAfter of [undefined, "", "soon", "-5", "1.5", "120 s", "0x10", "Mon, 31 Feb 2026 12:00:00 GMT", "Mon, 23 Nov 2026 25:00:00 GMT", "2026-11-23T12:03:20Z"]) {
      const answer = retryAfter === undefined ? { status: 503 } : { status: 503, retryAfter }
      expect(dueAfter(1, T0, answer), String(retryAfter)).toBe(30_000)
      expect(nextDeliveryState({ first_failed_at: null }, 1, answer, T0, SCHEDULE).retry_after_seconds).toBeUndefined()
    }
    for (const status of [500, 502, 504, 404, 301, null]) expect(dueAfter(1, T0, { status, retryAfter: "120" }), String(status)).toBe(30_000)
    expect(nextDeliveryState({ first_failed_at: null }, 1, { status: 200, retryAfter: "120" }, T0, SCHEDULE).status).toBe("succeeded")
  })

  it("whatever a receiver answers, the next attempt is due between the schedule's time and the following retry's", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: SCHEDULE.length }),
      fc.integer({ min: 0, max: 60_000 }),
      fc.constantFrom(429, 503, 500),
      fc.oneof(fc.nat({ max: 200_000 }).map(String), fc.integer({ min: -86_400_000, max: 86_400_000 }).map((d) => httpDate(T0 + d)), fc.string()),
      (attempt, lateBy, status, retryAfter) => {
        const scheduledMs = SCHEDULE[attempt - 1]!
        // The first failure is T0 itself; a retry fails `lateBy` after it was due.
        const endMs = attempt === 1 ? T0 : T0 + SCHEDULE[attempt - 2]! + lateBy
        const due = dueAfter(attempt, endMs, { status, retryAfter }) as number
        const earliest = Math.max(scheduledMs, endMs - T0)
        expect(due).toBeGreaterThanOrEqual(earliest)
        expect(due).toBeLessThanOrEqual(Math.max(earliest, SCHEDULE[attempt] ?? scheduledMs))
        if (status === 500) expect(due).toBe(earliest)
      }
    ))
  })
})

describe("retryAfterMillis", () => {
  const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)
  it("reads delay-seconds from now and HTTP-dates as UTC", () => {
    expect(retryAfterMillis("0", NOW)).toBe(NOW)
    expect(retryAfterMillis(" 120 ", NOW)).toBe(NOW + 120_000)
    expect(retryAfterMillis("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37))
    expect(retryAfterMillis("Sunday, 06-Nov-94 08:49:37 GMT", NOW)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37))
    expect(retryAfterMillis("Sun Nov  6 08:49:37 1994", NOW)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37))
    expect(retryAfterMillis("Thu, 29 Feb 2028 00:00:00 GMT", NOW)).toBe(Date.UTC(2028, 1, 29))
  })

  it("an RFC 850 year more than 50 years ahead is the last one before now with those digits", () => {
    expect(new Date(retryAfterMillis("Wednesday, 01-Jan-76 00:00:00 GMT", NOW)!).getUTCFullYear()).toBe(2076)
    expect(new Date(retryAfterMillis("Wednesday, 01-Jan-77 00:00:00 GMT", NOW)!).getUTCFullYear()).toBe(1977)
  })

  it("refuses what is neither form", () => {
    for (const value of ["", "abc", "-1", "+5", "1e3", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Tue, 29 Feb 2026 00:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "06 Nov 1994 08:49:37 GMT"]) {
      expect(retryAfterMillis(value, NOW), value).toBeUndefined()
    }
  })
})
