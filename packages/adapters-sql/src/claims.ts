import { type ClaimRequest, PROOF_TRANSITIONS, type StorageError, type Timestamp } from "@mzk/core"
import { Effect } from "effect"
import type { ExpressionBuilder } from "kysely"
import type { Executor, SqlConnection } from "./connection.js"
import type { Database } from "./schema.js"

/**
 * What every dialect's work claims are made of (`SqlDialect.pickDeliveries`, `pickProofs`): which
 * rows a claim may take, and the cap per group. The dialects differ only in how a claim is kept
 * apart from concurrent ones.
 */

/**
 * Takes ids in the order given, at most `limit` in all and at most `cap` per group, counting from
 * what each group already holds: the pick behind both work claims (deliveries per webhook, proofs
 * per account).
 */
export const pickCapped = <Row extends { readonly id: string }>(
  rows: ReadonlyArray<Row>,
  options: {
    readonly limit: number
    readonly cap: number
    readonly group: (row: Row) => string
    readonly held?: ReadonlyMap<string, number>
  }
): Array<string> => {
  const counts = new Map(options.held)
  const ids: Array<string> = []
  for (const row of rows) {
    if (ids.length >= options.limit) break
    const key = options.group(row)
    const count = counts.get(key) ?? 0
    if (count >= options.cap) continue
    counts.set(key, count + 1)
    ids.push(row.id)
  }
  return ids
}

/** No claim holds the delivery at `now`: it has no lease, or its lease has lapsed. */
export const deliveryUnleased = (now: Timestamp) => (eb: ExpressionBuilder<Database, "deliveries">) =>
  eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<=", now)])

/** The deliveries a claim may take at `now`: pending, due, and held by no claim. */
export const dueDeliveries = (db: Executor, now: Timestamp) =>
  db.selectFrom("deliveries").where("status", "=", "pending").where("next_attempt_at", "<=", now).where(deliveryUnleased(now))

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

/** How many candidates a proof claim reads per proof it may take, to pass over accounts at their cap. */
const PROOF_SCAN_FACTOR = 10

/** The oldest claimable proofs, as many as a claim may look at. */
export const proofCandidates = (db: Executor, claim: ClaimRequest) =>
  db.selectFrom("proofs").select(["id", "account_id"]).where(claimableProof(claim.now))
    .orderBy("id").limit(claim.limit * PROOF_SCAN_FACTOR)

/**
 * Of `candidates` (oldest first), the ids a proof claim takes: at most `limit`, and no account past
 * `maxRunningPerAccount` counting the proofs it already runs under a live lease.
 */
export const pickUnderRunningCap = (
  conn: SqlConnection,
  candidates: ReadonlyArray<{ readonly id: string; readonly account_id: string }>,
  claim: ClaimRequest
): Effect.Effect<ReadonlyArray<string>, StorageError> => {
  if (candidates.length === 0) return Effect.succeed([])
  const accounts = [...new Set(candidates.map((c) => c.account_id))].sort()
  return Effect.map(
    conn.rows((db) =>
      db.selectFrom("proofs").select(["account_id", (eb) => eb.fn.countAll<number | string>().as("running")])
        .where("account_id", "in", accounts).where("status", "=", "running").where("lease_expires_at", ">", claim.now)
        .groupBy("account_id")
    ),
    (counts) =>
      pickCapped(candidates, {
        limit: claim.limit,
        cap: claim.maxRunningPerAccount,
        group: (candidate) => candidate.account_id,
        held: new Map(counts.map((c) => [c.account_id, Number(c.running)]))
      })
  )
}
