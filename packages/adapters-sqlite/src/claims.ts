import { type DeliveryClaim, dueDeliveries, pickCapped, pickUnderRunningCap, proofCandidates, type SqlConnection } from "@mzk/adapters-sql"
import type { ClaimRequest } from "@mzk/core"
import { Effect } from "effect"

/**
 * The work claims on SQLite. Its transactions write one at a time, so nothing else claims while a
 * claim runs: what a claim reads stays true until it commits, and it can read the earliest rows in
 * index order and cap them per group in code, which is far cheaper than ranking every due row.
 */

/** How many due rows a delivery claim reads per delivery it may take, to pass over capped webhooks. */
const DELIVERY_SCAN_FACTOR = 4

export const scannedDeliveryPick = (conn: SqlConnection, { excludeWebhooks, limit, maxPerWebhook, now }: DeliveryClaim) =>
  conn.rows((db) =>
    dueDeliveries(db, now).select(["id", "webhook_id"])
      .$if(excludeWebhooks.length > 0, (q) => q.where("webhook_id", "not in", [...excludeWebhooks]))
      .orderBy("next_attempt_at").orderBy("id").limit(limit * DELIVERY_SCAN_FACTOR)
  ).pipe(Effect.map((due) => pickCapped(due, { limit, cap: maxPerWebhook, group: (row) => row.webhook_id })))

/** The oldest claimable proofs, capped per account by the running counts read in the same transaction. */
export const scannedProofPick = (conn: SqlConnection, claim: ClaimRequest) =>
  Effect.flatMap(conn.rows((db) => proofCandidates(db, claim)), (candidates) => pickUnderRunningCap(conn, candidates, claim))
