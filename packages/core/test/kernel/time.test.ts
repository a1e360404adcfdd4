import { describe, expect, it } from "@effect/vitest"
import { isRealTimestamp, Timestamp } from "@mzk/core"
import { Either, Schema } from "effect"
import fc from "fast-check"

/** The Gregorian calendar written out, independently of `Date`: a leap year every 4, not every 100, every 400. */
const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/** Fields around and past their ranges, so about half the timestamps made are impossible. */
const fields = fc.record({
  year: fc.integer({ min: 0, max: 9999 }),
  month: fc.integer({ min: 0, max: 13 }),
  day: fc.integer({ min: 0, max: 32 }),
  hour: fc.integer({ min: 0, max: 25 }),
  minute: fc.integer({ min: 0, max: 60 }),
  second: fc.integer({ min: 0, max: 60 }),
  millis: fc.integer({ min: 0, max: 999 })
})

const text = (f: typeof fields extends fc.Arbitrary<infer A> ? A : never) =>
  `${pad(f.year, 4)}-${pad(f.month, 2)}-${pad(f.day, 2)}T${pad(f.hour, 2)}:${pad(f.minute, 2)}:${pad(f.second, 2)}.${pad(f.millis, 3)}Z`

const decode = Schema.decodeUnknownEither(Timestamp)

describe("Timestamp: a real date and time in the documented form", () => {
  it("agrees with the calendar written out on every field near and past its range", () => {
    fc.assert(
      fc.property(fields, (f) => {
        const real = f.month >= 1 && f.month <= 12 && f.day >= 1 && f.day <= daysIn(f.year, f.month) && f.hour <= 23 && f.minute <= 59 && f.second <= 59
        expect(isRealTimestamp(text(f))).toBe(real)
        expect(Either.isRight(decode(text(f)))).toBe(real)
      }),
      { numRuns: 5_000 }
    )
  })

  it("takes every instant a clock can give, and what it takes reads back as the same instant", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.parse("0000-01-01T00:00:00.000Z"), max: Date.parse("9999-12-31T23:59:59.999Z") }), (millis) => {
        const stamp = new Date(millis).toISOString()
        expect(decode(stamp)).toEqual(Either.right(stamp))
        expect(Date.parse(stamp)).toBe(millis)
      })
    )
  })

  it("names the problem: the form, or a date or time that does not exist", () => {
    const message = (input: unknown) => Either.match(decode(input), { onLeft: (e) => e.message, onRight: () => "accepted" })
    expect(message("2030-02-30T00:00:00.000Z")).toContain("must be a real date and time")
    expect(message("2030-01-01T24:00:00.000Z")).toContain("must be a real date and time")
    expect(message("2030-01-01T00:00:00Z")).toContain("must be an ISO 8601 UTC timestamp with milliseconds")
    expect(message("2030-01-01T00:00:00.000+01:00")).toContain("must be an ISO 8601 UTC timestamp with milliseconds")
    expect(message("2032-02-29T12:00:00.000Z")).toBe("accepted")
  })
})
