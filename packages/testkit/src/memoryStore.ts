import {
  type Account,
  AccountsRepo,
  type ApiKeyRecord,
  type DeliveryRecord,
  DeliveriesRepo,
  type EventRecord,
  EventsRepo,
  KeyLimitReached,
  KeysRepo,
  type Page,
  type PageOf,
  RateLimitsRepo,
  type Storage,
  Transactor,
  type WebhookRecord,
  WebhookLimitReached,
  WebhooksRepo
} from "@mzk/core"
import { Context, Effect, Exit, FiberRef, Layer, Option } from "effect"

interface State {
  accounts: Map<string, Account>
  keys: Map<string, ApiKeyRecord>
  webhooks: Map<string, WebhookRecord>
  events: Map<string, EventRecord>
  deliveries: Map<string, DeliveryRecord>
  counters: Map<string, { window_start: number; count: number }>
}

const emptyState = (): State => ({
  accounts: new Map(),
  keys: new Map(),
  webhooks: new Map(),
  events: new Map(),
  deliveries: new Map(),
  counters: new Map()
})

// Records are replaced, never mutated, so copying the maps is a full snapshot.
const snapshot = (s: State): State => ({
  accounts: new Map(s.accounts),
  keys: new Map(s.keys),
  webhooks: new Map(s.webhooks),
  events: new Map(s.events),
  deliveries: new Map(s.deliveries),
  counters: new Map(s.counters)
})

// Ids begin with their creation time, so id order is creation order (the port's contract).
const byId = <A extends { readonly id: string }>(a: A, b: A) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const paginate = <A extends { readonly id: string }>(rows: Array<A>, page: Page): PageOf<A> => {
  const sorted = rows.sort(byId)
  const after = page.startingAfter
  const rest = after === undefined ? sorted : sorted.filter((row) => row.id > after)
  return { items: rest.slice(0, page.limit), total: sorted.length, has_more: rest.length > page.limit }
}

/**
 * Every storage port in memory: the reference implementation the conformance suite is written
 * against, and a fast store for tests of code built on mzk. One writer at a time (a semaphore),
 * transactions roll back by restoring a snapshot. Writes yield between their check and their
 * change, so a missing lock shows up as a lost race in the conformance suite instead of passing
 * by luck of the scheduler.
 */
export const makeMemoryStore: Effect.Effect<Context.Context<Storage>> = Effect.gen(function*() {
  let state = emptyState()
  const lock = yield* Effect.makeSemaphore(1)
  const inTransaction = FiberRef.unsafeMake(false)

  const write = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.flatMap(FiberRef.get(inTransaction), (inside) => (inside ? effect : lock.withPermits(1)(effect)))
  const read = <A>(f: (s: State) => A): Effect.Effect<A> => Effect.sync(() => f(state))

  const transactor = Transactor.of({
    transaction: (effect) =>
      Effect.flatMap(FiberRef.get(inTransaction), (inside) =>
        inside
          ? effect
          : lock.withPermits(1)(
            Effect.suspend(() => {
              const before = snapshot(state)
              return Effect.locally(effect, inTransaction, true).pipe(
                Effect.onExit((exit) =>
                  Effect.sync(() => {
                    if (Exit.isFailure(exit)) state = before
                  })
                )
              )
            })
          ))
  })

  const accounts = AccountsRepo.of({
    insert: (account) => write(Effect.sync(() => void state.accounts.set(account.id, account))),
    get: (id) => read((s) => Option.fromNullable(s.accounts.get(id)))
  })

  const activeKeys = (s: State, accountId: string) =>
    [...s.keys.values()].filter((k) => k.account_id === accountId && k.revoked_at === null)

  const keys = KeysRepo.of({
    insert: (key, { maxActive }) =>
      write(Effect.gen(function*() {
        const count = activeKeys(state, key.account_id).length
        yield* Effect.yieldNow()
        if (count >= maxActive) {
          return yield* new KeyLimitReached({ message: `An account may hold at most ${maxActive} active keys` })
        }
        state.keys.set(key.id, key)
      })),
    findByHash: (hash) => read((s) => Option.fromNullable([...s.keys.values()].find((k) => k.hash === hash))),
    listActive: (accountId) => read((s) => activeKeys(s, accountId).sort(byId)),
    revoke: (accountId, id, at) =>
      write(Effect.sync(() => {
        const key = state.keys.get(id)
        if (key === undefined || key.account_id !== accountId || key.revoked_at !== null) return Option.none()
        const revoked = { ...key, revoked_at: at }
        state.keys.set(id, revoked)
        return Option.some(revoked)
      })),
    touch: (id, at, staleBefore) =>
      write(Effect.sync(() => {
        const key = state.keys.get(id)
        if (key === undefined || (key.last_used_at !== null && key.last_used_at >= staleBefore)) return false
        state.keys.set(id, { ...key, last_used_at: at })
        return true
      }))
  })

  const ownWebhook = (s: State, accountId: string, id: string) => {
    const webhook = s.webhooks.get(id)
    return webhook !== undefined && webhook.account_id === accountId ? webhook : undefined
  }

  const webhooks = WebhooksRepo.of({
    insert: (webhook, { maxPerAccount }) =>
      write(Effect.gen(function*() {
        const count = [...state.webhooks.values()].filter((w) => w.account_id === webhook.account_id).length
        yield* Effect.yieldNow()
        if (count >= maxPerAccount) {
          return yield* new WebhookLimitReached({ message: `An account may hold at most ${maxPerAccount} webhooks` })
        }
        state.webhooks.set(webhook.id, webhook)
      })),
    get: (accountId, id) => read((s) => Option.fromNullable(ownWebhook(s, accountId, id))),
    list: (accountId, page) => read((s) => paginate([...s.webhooks.values()].filter((w) => w.account_id === accountId), page)),
    update: (accountId, id, changes, at) =>
      write(Effect.sync(() => {
        const webhook = ownWebhook(state, accountId, id)
        if (webhook === undefined) return Option.none()
        const updated: WebhookRecord = { ...webhook, ...changes, updated_at: at }
        state.webhooks.set(id, updated)
        return Option.some(updated)
      })),
    remove: (accountId, id) =>
      write(Effect.sync(() => ownWebhook(state, accountId, id) !== undefined && state.webhooks.delete(id))),
    listSubscribed: (accountId, type) =>
      read((s) =>
        [...s.webhooks.values()]
          .filter((w) => w.account_id === accountId && w.active && w.events.includes(type))
          .sort(byId)
      )
  })

  const events = EventsRepo.of({
    insert: (event) => write(Effect.sync(() => void state.events.set(event.id, event))),
    get: (id) => read((s) => Option.fromNullable(s.events.get(id))),
    list: (accountId, page) => read((s) => paginate([...s.events.values()].filter((e) => e.account_id === accountId), page))
  })

  const deliveries = DeliveriesRepo.of({
    insertMany: (rows) => write(Effect.sync(() => rows.forEach((row) => state.deliveries.set(row.id, row)))),
    listByEvent: (eventId) =>
      read((s) => [...s.deliveries.values()].filter((d) => d.event_id === eventId).sort(byId))
  })

  const rateLimits = RateLimitsRepo.of({
    consume: (buckets) =>
      write(Effect.gen(function*() {
        const current = buckets.map((b) => {
          const stored = state.counters.get(b.bucket)
          // A caller whose clock lags another process's counts against the newer window.
          return stored !== undefined && stored.window_start >= b.window_start ? stored.count : 0
        })
        yield* Effect.yieldNow()
        const admitted = buckets.every((b, i) => current[i]! + b.cost <= b.limit)
        if (!admitted) return { admitted, counts: current }
        const counts = buckets.map((b, i) => {
          const count = current[i]! + b.cost
          const windowStart = Math.max(b.window_start, state.counters.get(b.bucket)?.window_start ?? 0)
          state.counters.set(b.bucket, { window_start: windowStart, count })
          return count
        })
        return { admitted, counts }
      }))
  })

  return Context.empty().pipe(
    Context.add(Transactor, transactor),
    Context.add(AccountsRepo, accounts),
    Context.add(KeysRepo, keys),
    Context.add(WebhooksRepo, webhooks),
    Context.add(EventsRepo, events),
    Context.add(DeliveriesRepo, deliveries),
    Context.add(RateLimitsRepo, rateLimits)
  )
})

/** A fresh, empty in-memory store per build of the layer. */
export const MemoryStore: Layer.Layer<Storage> = Layer.effectContext(makeMemoryStore)
