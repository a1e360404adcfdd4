import { type Kysely, type Migration, sql } from "kysely"

/** The failure of a proof whose deadline passed while it was queued, as it was stored (JSON text). */
const OVERDUE = JSON.stringify({
  code: "timeout",
  message: "The request's deadline (timeout_ms) passed while the proof was queued; it was never started"
})

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    // When a proof settled, however it did (completed, failed or canceled): until now a failed
    // proof's moment was kept in completed_at and a canceled one's in canceled_at.
    await db.schema.alterTable("proofs").addColumn("finished_at", "text").execute()
    await sql`UPDATE proofs SET finished_at = COALESCE(completed_at, canceled_at)`.execute(db)
    // completed_at is a completion's only: a failed proof (expired ones included) has none.
    await sql`UPDATE proofs SET completed_at = NULL WHERE error IS NOT NULL`.execute(db)
    // A proof a worker claimed after its deadline had passed was never started, and failed at once.
    await sql`UPDATE proofs SET started_at = NULL, duration_ms = 0, proving_ms = NULL WHERE error = ${OVERDUE}`.execute(db)
    // The usage report's proofs settled this month are found by finished_at now.
    await db.schema.dropIndex("proofs_by_account_settled").execute()
    await db.schema.createIndex("proofs_by_account_finished").on("proofs").columns(["account_id", "finished_at"])
      .where(sql.ref("finished_at"), "is not", null).execute()
  }
})
