import { claimableDeliveries, type DeliveryClaim, dueDeliveries, pickProofsInTurns, type SqlConnection } from "@mzk/adapters-sql"
import type { ClaimRequest } from "@mzk/core"
import { Effect } from "effect"
import { sql } from "kysely"
import { lockAccounts } from "./rowLocks.js"

/**
 * The work claims on PostgreSQL, where any number of processes claim from the same tables at once.
 */

/**
 * `takeInTurns` in SQL: the due deliveries ranked within their webhook, the first `maxPerWebhook`
 * of each kept; those ranked within their account, the rank plus what the account already holds
 * in the claiming engine being its turn; turns at the account cap dropped; then by turn, earliest
 * first, exactly `limit` locked with SKIP LOCKED: concurrent claims pass over each other's rows and
 * lock nothing they do not take, so together they drain all that is due, each engine sharing its
 * own slots fairly. The due conditions apply to the locked rows too: Postgres re-checks a locking
 * query's own conditions against a row another claim just committed, not those inside a subquery.
 */
export const skipLockedDeliveryPick = (conn: SqlConnection, claim: DeliveryClaim) =>
  conn.rows((db) => {
    const { heldByAccount, limit, maxPerAccount, maxPerWebhook, now } = claim
    const held = maxPerAccount === undefined ? [] : [...(heldByAccount ?? [])].filter(([, n]) => n > 0)
    const heldOf = held.length === 0
      ? sql<number>`0`
      : sql<number>`case ${sql.ref("w.account_id")} ${sql.join(held.map(([account, n]) => sql`when ${account} then ${sql.lit(n)}`), sql` `)} else 0 end`
    const byWebhook = claimableDeliveries(db, claim)
      .select(["id", "account_id", "next_attempt_at", sql<number>`row_number() over (partition by webhook_id order by next_attempt_at, id)`.as("rank")])
    const turns = db.selectFrom(byWebhook.as("w"))
      .select(["w.id", sql<number>`row_number() over (partition by w.account_id order by w.next_attempt_at, w.id) - 1 + ${heldOf}`.as("turn")])
      .where("w.rank", "<=", maxPerWebhook)
    return dueDeliveries(db, now).innerJoin(turns.as("t"), "t.id", "deliveries.id").select("deliveries.id")
      .$if(maxPerAccount !== undefined, (q) => q.where("t.turn", "<", maxPerAccount!))
      .orderBy("t.turn").orderBy("deliveries.next_attempt_at").orderBy("deliveries.id").limit(limit)
      .forUpdate("deliveries").skipLocked()
  }).pipe(Effect.map((rows) => rows.map((r) => r.id)))

/**
 * Proof claims serialise per account: the accounts a claim would give a turn are locked (in id
 * order, so two claims never wait on each other in a cycle), then their running counts and oldest
 * queued proofs are read again under that lock, so the per-account limit holds across processes.
 * Claims for other accounts go on in parallel.
 */
export const accountLockedProofPick = (conn: SqlConnection, claim: ClaimRequest) =>
  pickProofsInTurns(conn, claim, (accounts) => lockAccounts(conn, accounts))
