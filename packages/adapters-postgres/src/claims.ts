import { type DeliveryClaim, dueDeliveries, pickUnderRunningCap, proofCandidates, type SqlConnection } from "@mzk/adapters-sql"
import type { ClaimRequest } from "@mzk/core"
import { Effect } from "effect"
import { sql } from "kysely"
import { lockAccounts } from "./rowLocks.js"

/**
 * The work claims on PostgreSQL, where any number of processes claim from the same tables at once.
 */

/**
 * The due deliveries ranked within their webhook, the first `maxPerWebhook` of each kept, and of
 * those exactly `limit` locked with SKIP LOCKED: concurrent claims pass over each other's rows and
 * lock nothing they do not take, so together they drain all that is due. The due conditions apply
 * to the locked rows too: Postgres re-checks a locking query's own conditions against a row another
 * claim just committed, not those inside a subquery.
 */
export const skipLockedDeliveryPick = (conn: SqlConnection, { excludeWebhooks, limit, maxPerWebhook, now }: DeliveryClaim) =>
  conn.rows((db) => {
    const ranked = dueDeliveries(db, now)
      .select(["id", sql<number>`row_number() over (partition by webhook_id order by next_attempt_at, id)`.as("rank")])
      .$if(excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...excludeWebhooks]))
    return dueDeliveries(db, now).select("id")
      .where("id", "in", db.selectFrom(ranked.as("ranked")).select("ranked.id").where("ranked.rank", "<=", maxPerWebhook))
      .orderBy("next_attempt_at").orderBy("id").limit(limit)
      .forUpdate().skipLocked()
  }).pipe(Effect.map((rows) => rows.map((r) => r.id)))

/**
 * Proof claims serialise per account: the accounts of the first candidates are locked (in id
 * order, so two claims never wait on each other in a cycle), then their claimable proofs are read
 * again and the running count is taken under that lock, so the per-account limit holds across
 * processes. Claims for other accounts go on in parallel.
 */
export const accountLockedProofPick = (conn: SqlConnection, claim: ClaimRequest) =>
  Effect.gen(function*() {
    const peek = yield* conn.rows((db) => proofCandidates(db, claim))
    if (peek.length === 0) return []
    const accounts = [...new Set(peek.map((c) => c.account_id))].sort()
    yield* lockAccounts(conn, accounts)
    // The peek was read before the lock; another claim may have taken some of it meanwhile.
    const candidates = yield* conn.rows((db) => proofCandidates(db, claim).where("account_id", "in", accounts))
    return yield* pickUnderRunningCap(conn, candidates, claim)
  })
