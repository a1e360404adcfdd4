import { takeInTurns } from "@mzk/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

interface Row {
  readonly id: number
  readonly owner: string
  readonly group: string
}

const OWNERS = ["a", "b", "c", "d"]

/** Candidates in claim order (ids ascending), each of an owner and of one of that owner's groups. */
const rows = fc.array(fc.tuple(fc.constantFrom(...OWNERS), fc.integer({ min: 0, max: 2 })), { maxLength: 60 })
  .map((pairs) => pairs.map(([owner, g], id): Row => ({ id, owner, group: `${owner}${g}` })))
const held = fc.dictionary(fc.constantFrom(...OWNERS), fc.integer({ min: 0, max: 6 }))
  .map((record) => new Map(Object.entries(record)))
const options = fc.record({ limit: fc.integer({ min: 0, max: 20 }), cap: fc.integer({ min: 0, max: 8 }), groupCap: fc.integer({ min: 1, max: 5 }) })

const pick = (all: ReadonlyArray<Row>, heldBy: ReadonlyMap<string, number>, o: { limit: number; cap: number; groupCap: number }) =>
  takeInTurns(all, { limit: o.limit, cap: o.cap, held: heldBy, owner: (r) => r.owner, within: { group: (r) => r.group, cap: o.groupCap } })

const countBy = <A>(items: ReadonlyArray<A>, key: (a: A) => string) => {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1)
  return counts
}

describe("takeInTurns: the fair pick of the work claims", () => {
  it("an owner with a long backlog does not hold another owner's first row back", () => {
    const backlog = Array.from({ length: 1_000 }, (_, id): Row => ({ id, owner: "a", group: "a" }))
    const all = [...backlog, { id: 1_000, owner: "b", group: "b" }]
    // One free slot, a has 2 running: b's only row goes first.
    expect(takeInTurns(all, { limit: 1, cap: 10, held: new Map([["a", 2]]), owner: (r) => r.owner }).map((r) => r.id)).toEqual([1_000])
    // Nothing held: a's oldest and b's, then a's next ones.
    expect(takeInTurns(all, { limit: 4, cap: 10, owner: (r) => r.owner }).map((r) => r.id)).toEqual([0, 1_000, 1, 2])
  })

  it("caps hold: at most limit rows, no owner past its cap counting what it holds, no group past its cap", () =>
    fc.assert(fc.property(rows, held, options, (all, heldBy, o) => {
      const picked = pick(all, heldBy, o)
      expect(picked.length).toBeLessThanOrEqual(o.limit)
      expect(new Set(picked.map((r) => r.id)).size).toBe(picked.length)
      for (const [owner, n] of countBy(picked, (r) => r.owner)) expect(n + (heldBy.get(owner) ?? 0)).toBeLessThanOrEqual(o.cap)
      for (const n of countBy(picked, (r) => r.group).values()) expect(n).toBeLessThanOrEqual(o.groupCap)
    })))

  it("no owner is starved: an owner left with nothing while rows of it were eligible holds no fewer than any owner that got one", () =>
    fc.assert(fc.property(rows, held, options, (all, heldBy, o) => {
      const picked = pick(all, heldBy, o)
      const got = countBy(picked, (r) => r.owner)
      const after = (owner: string) => (heldBy.get(owner) ?? 0) + (got.get(owner) ?? 0)
      // An owner had an eligible row: one within its group's cap, the owner under its cap.
      const eligible = new Set(pick(all, heldBy, { ...o, limit: Number.MAX_SAFE_INTEGER }).map((r) => r.owner))
      for (const owner of eligible) {
        if (got.has(owner)) continue
        // It was passed over only because the limit ran out on owners at its turn or before it.
        expect(picked.length).toBe(o.limit)
        for (const other of got.keys()) expect(after(other) - 1).toBeLessThanOrEqual(heldBy.get(owner) ?? 0)
      }
    })))

  it("within an owner, rows are taken in the order given", () =>
    fc.assert(fc.property(rows, held, options, (all, heldBy, o) => {
      const picked = pick(all, heldBy, o)
      for (const owner of OWNERS) {
        const ids = picked.filter((r) => r.owner === owner).map((r) => r.id)
        expect(ids).toEqual([...ids].sort((x, y) => x - y))
      }
    })))
})
