import { claimableDeliveries, type DeliveryClaim, deliveriesInTurns, pickProofsInTurns, type SqlConnection } from "@mzk/adapters-sql"
import type { ClaimRequest } from "@mzk/core"
import { Effect } from "effect"

/**
 * The work claims on SQLite. Its transactions write one at a time, so nothing else claims while a
 * claim runs: what a claim reads stays true until it commits, and it can read the earliest rows in
 * index order and take them in turns in code, which is far cheaper than ranking every due row.
 */

/**
 * How many due rows a delivery claim reads per delivery it may take, to pass over capped webhooks.
 * Accounts at their cap are left out by the query itself; one with room left but a long backlog
 * can fill the window, and then another account's rows wait for the next claim, which no longer
 * reads that account's.
 */
const DELIVERY_SCAN_FACTOR = 4

export const scannedDeliveryPick = (conn: SqlConnection, claim: DeliveryClaim) =>
  conn.rows((db) =>
    claimableDeliveries(db, claim).select(["id", "webhook_id", "account_id"])
      .orderBy("next_attempt_at").orderBy("id").limit(claim.limit * DELIVERY_SCAN_FACTOR)
  ).pipe(Effect.map((due) => deliveriesInTurns(due, claim).map((row) => row.id)))

/** Proofs in turns across accounts; one writer at a time, so nothing is held. */
export const scannedProofPick = (conn: SqlConnection, claim: ClaimRequest) => pickProofsInTurns(conn, claim, () => Effect.void)
