import { type AccountId, type ClaimRequest, PROOF_TRANSITIONS, type StorageError, takeInTurns, type Timestamp } from "@mzk/core"
import { Effect } from "effect"
import { type ExpressionBuilder, type RawBuilder, sql } from "kysely"
import type { Executor, SqlConnection } from "./connection.js"
import type { Database } from "./schema.js"
import type { DeliveryClaim } from "./sqlDialect.js"

/**
 * What every dialect's work claims are made of (`SqlDialect.pickDeliveries`, `pickProofs`): which
 * rows a claim may take, and in what turns across accounts (`takeInTurns`). The dialects differ
 * only in how a claim is kept apart from concurrent ones.
 */

/** No claim holds the delivery at `now`: it has no lease, or its lease has lapsed. */
export const deliveryUnleased = (now: Timestamp) => (eb: ExpressionBuilder<Database, "deliveries">) =>
  eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<=", now)])

/** The deliveries a claim may take at `now`: pending, due, and held by no claim. */
export const dueDeliveries = (db: Executor, now: Timestamp) =>
  db.selectFrom("deliveries").where("status", "=", "pending").where("next_attempt_at", "<=", now).where(deliveryUnleased(now))

/** The accounts a delivery claim gives nothing: those already holding their cap. */
export const accountsAtCap = ({ heldByAccount, maxPerAccount }: DeliveryClaim): Array<AccountId> =>
  maxPerAccount === undefined ? [] : [...(heldByAccount ?? new Map<AccountId, number>())].filter(([, held]) => held >= maxPerAccount).map(([id]) => id)

/**
 * The due deliveries of a claim, less the webhooks and accounts it leaves out, so a scan in due
 * order passes over capped ones inside the database rather than reading them.
 */
export const claimableDeliveries = (db: Executor, claim: DeliveryClaim) => {
  const capped = accountsAtCap(claim)
  return dueDeliveries(db, claim.now)
    .$if(claim.excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...claim.excludeWebhooks]))
    .$if(capped.length > 0, (q) => q.where("account_id", "not in", capped))
}

/** `takeInTurns` as a delivery claim asks it: per account, over the first `maxPerWebhook` of each webhook. */
export const deliveriesInTurns = <Row extends { readonly account_id: string; readonly webhook_id: string }>(
  due: ReadonlyArray<Row>,
  claim: DeliveryClaim
) =>
  takeInTurns(due, {
    limit: claim.limit,
    owner: (row) => row.account_id,
    cap: claim.maxPerAccount ?? Number.POSITIVE_INFINITY,
    held: claim.maxPerAccount === undefined ? undefined : claim.heldByAccount,
    within: { group: (row) => row.webhook_id, cap: claim.maxPerWebhook }
  })

/**
 * A proof a claim may take at `now`: in one of the claim's `from` statuses of the lifecycle table
 * (queued), and, when already running, only under a lapsed lease (its worker died).
 */
export const claimableProof = (now: Timestamp) => (eb: ExpressionBuilder<Database, "proofs">) =>
  eb.or(PROOF_TRANSITIONS.claim.from.map((status) =>
    status === PROOF_TRANSITIONS.claim.to
      ? eb.and([eb("status", "=", status), eb("lease_expires_at", "<=", now)])
      : eb("status", "=", status)
  ))

/** The status of proofs waiting for their first claim (the other one a claim takes from is running, under a lapsed lease). */
const QUEUED = PROOF_TRANSITIONS.claim.from[0]

/** A raw statement as the connection runs it (`SqlConnection.rows`), on the executor it is given. */
const raw = <R>(query: RawBuilder<R>) => (db: Executor) => ({ compile: () => query.compile(db) })

/**
 * The accounts with queued proofs, each with its first in claim order (highest priority, then
 * oldest): a loose index scan over `proofs_queue_by_priority` (status, account_id, priority_rank, id) that steps from one account to the next, so an account's thousand queued
 * proofs cost one index probe, not a thousand rows read. Written as a recursive CTE because neither
 * database skips through an index by itself for `group by`.
 */
const queuedHeads = raw(sql<{ account_id: string; head: string }>`
  with recursive queued(account_id) as (
    select (select account_id from proofs where status = ${QUEUED} order by account_id limit 1)
    union all
    select (select p.account_id from proofs p where p.status = ${QUEUED} and p.account_id > q.account_id order by p.account_id limit 1)
    from queued q where q.account_id is not null
  )
  select q.account_id as account_id,
    (select p.id from proofs p where p.status = ${QUEUED} and p.account_id = q.account_id order by p.priority_rank, p.id limit 1) as head
  from queued q where q.account_id is not null`)

/** Running proofs whose lease has lapsed (their worker died): claimable again, and few. */
const lapsedProofs = (db: Executor, claim: ClaimRequest, accounts?: ReadonlyArray<string>) =>
  db.selectFrom("proofs").select(["id", "account_id"]).where("status", "=", PROOF_TRANSITIONS.claim.to)
    .where("lease_expires_at", "<=", claim.now)
    .$if(accounts !== undefined, (q) => q.where("account_id", "in", accounts!))
    .orderBy("id").limit(claim.limit)

/** What each account runs under a live lease: running proofs are few (the workers' threads), so this reads little. */
const runningByAccount = (conn: SqlConnection, claim: ClaimRequest, accounts?: ReadonlyArray<string>) =>
  Effect.map(
    conn.rows((db) =>
      db.selectFrom("proofs").select(["account_id", (eb) => eb.fn.countAll<number | string>().as("running")])
        .where("status", "=", PROOF_TRANSITIONS.claim.to).where("lease_expires_at", ">", claim.now)
        .$if(accounts !== undefined, (q) => q.where("account_id", "in", accounts!))
        .groupBy("account_id")
    ),
    (counts) => new Map(counts.map((c) => [c.account_id, Number(c.running)]))
  )

/**
 * The proofs a claim takes, in turns across accounts (`takeInTurns`): each account's next in
 * turn (a lapsed one it had started first, then its queued ones by priority, then oldest), the account running fewest first, none past `maxRunningPerAccount`. Only the first `limit`
 * accounts in that order can get a turn, so only theirs are read, each with at most as many of its
 * oldest as it could take; `hold` keeps concurrent claims for those accounts apart (it may be
 * nothing where one writer runs at a time), and what the pick counts is read again under it.
 */
export const pickProofsInTurns = (
  conn: SqlConnection,
  claim: ClaimRequest,
  hold: (accounts: ReadonlyArray<string>) => Effect.Effect<void, StorageError>
): Effect.Effect<ReadonlyArray<string>, StorageError> =>
  Effect.gen(function*() {
    if (claim.limit <= 0) return []
    const heads = new Map((yield* conn.rows(queuedHeads)).map((row) => [row.account_id, row.head]))
    for (const lapsed of yield* conn.rows((db) => lapsedProofs(db, claim))) {
      const head = heads.get(lapsed.account_id)
      if (head === undefined || lapsed.id < head) heads.set(lapsed.account_id, lapsed.id)
    }
    if (heads.size === 0) return []
    const before = yield* runningByAccount(conn, claim)
    const held = (running: ReadonlyMap<string, number>, account: string) => running.get(account) ?? 0
    const chosen = [...heads]
      .filter(([account]) => held(before, account) < claim.maxRunningPerAccount)
      .sort(([a, headA], [b, headB]) => held(before, a) - held(before, b) || (headA < headB ? -1 : 1))
      .slice(0, claim.limit)
      .map(([account]) => account)
      .sort()
    if (chosen.length === 0) return []
    yield* hold(chosen)
    const running = yield* runningByAccount(conn, claim, chosen)
    // Each account's candidates in its own claim order; `place` is the index within it.
    const perAccount = new Map<string, Array<{ readonly id: string; readonly account_id: string }>>()
    for (const row of yield* conn.rows((db) => lapsedProofs(db, claim, chosen))) {
      perAccount.set(row.account_id, [...(perAccount.get(row.account_id) ?? []), row])
    }
    for (const account of chosen) {
      const room = Math.min(claim.limit, claim.maxRunningPerAccount - held(running, account))
      if (room <= 0) continue
      perAccount.set(account, [
        ...(perAccount.get(account) ?? []),
        ...yield* conn.rows((db) =>
          db.selectFrom("proofs").select(["id", "account_id"]).where("status", "=", QUEUED).where("account_id", "=", account)
            .orderBy("priority_rank").orderBy("id").limit(room)
        )
      ])
    }
    // takeInTurns gives an owner's k-th row in the order given its k-th turn and breaks ties by that
    // order: sorted by that turn, then age, rows of equal turns go oldest first (as before
    // priorities) while each account's own order, by priority, is kept.
    const candidates = [...perAccount.values()].flatMap((rows) => rows.map((row, place) => ({ ...row, turn: held(running, row.account_id) + place })))
      .sort((a, b) => a.turn - b.turn || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return takeInTurns(candidates, { limit: claim.limit, owner: (row) => row.account_id, cap: claim.maxRunningPerAccount, held: running })
      .map((row) => row.id)
  })
