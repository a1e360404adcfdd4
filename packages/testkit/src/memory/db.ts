import { makeCommitHooks } from "@mzk/core"
import { Effect, Exit, FiberRef } from "effect"

/** A table: rows by id. Rows are replaced, never mutated, so copying the map is a snapshot. */
export type Table<A> = Map<string, A>

/**
 * The in-memory database under every memory repository: named tables, one writer at a time (a
 * semaphore), and transactions that roll back by restoring a snapshot of every table. Repository
 * modules ask for their tables by name, so adding a repository touches no other.
 */
export interface MemoryDb {
  readonly table: <A>(name: string) => Table<A>
  /** Runs a write under the lock, or inside the current transaction when there is one. */
  readonly write: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}

export const makeMemoryDb: Effect.Effect<MemoryDb> = Effect.gen(function*() {
  const tables = new Map<string, Table<unknown>>()
  const lock = yield* Effect.makeSemaphore(1)
  const inTransaction = FiberRef.unsafeMake(false)
  const hooks = makeCommitHooks()

  const table = <A>(name: string): Table<A> => {
    let found = tables.get(name)
    if (found === undefined) {
      found = new Map()
      tables.set(name, found)
    }
    return found as Table<A>
  }

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) =>
      inside
        ? effect
        : hooks.collect(lock.withPermits(1)(Effect.suspend(() => {
          const before = new Map([...tables].map(([name, rows]) => [name, new Map(rows)]))
          return Effect.locally(effect, inTransaction, true).pipe(
            Effect.onExit((exit) =>
              Effect.sync(() => {
                if (Exit.isFailure(exit)) {
                  // Restore in place: repositories hold references to the table maps.
                  for (const [name, rows] of tables) {
                    rows.clear()
                    for (const [id, row] of before.get(name) ?? []) rows.set(id, row)
                  }
                }
              })
            )
          )
        }))))

  const write = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) => (inside ? effect : lock.withPermits(1)(effect)))

  return { table, write, transaction, afterCommit: hooks.afterCommit }
})

/** Ids begin with their creation time, so id order is creation order (the ports' contract). */
export const byId = <A extends { readonly id: string }>(a: A, b: A) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export const paginate = <A extends { readonly id: string }>(
  rows: Iterable<A>,
  page: { readonly limit: number; readonly startingAfter?: string | undefined; readonly order?: "asc" | "desc" | undefined }
) => {
  const newestFirst = page.order === "desc"
  const sorted = [...rows].sort(newestFirst ? (a, b) => byId(b, a) : byId)
  const after = page.startingAfter
  const rest = after === undefined ? sorted : sorted.filter((row) => (newestFirst ? row.id < after : row.id > after))
  return { items: rest.slice(0, page.limit), total: sorted.length, has_more: rest.length > page.limit }
}
