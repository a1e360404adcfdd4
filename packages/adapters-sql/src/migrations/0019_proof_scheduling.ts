import { type Kysely, type Migration, sql } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    // The order of an account's queued proofs: 0 high, 1 normal, 2 low (`priorityRank`); every
    // existing proof was requested without one, so normal.
    await db.schema.alterTable("proofs").addColumn("priority_rank", "integer", (c) => c.notNull().defaultTo(1)).execute()
    // created_at + the request's timeout_ms; null (no deadline) for every existing proof.
    await db.schema.alterTable("proofs").addColumn("deadline_at", "text").execute()
    // The prover's own time within duration_ms; unknown for proofs settled before it was measured.
    await db.schema.alterTable("proofs").addColumn("proving_ms", "integer").execute()
    // Claims step through each account's queued proofs in priority, then id order, and a queue
    // position counts the proofs ahead of one in that order: this index replaces proofs_queue
    // (status, account_id, id), whose uses it serves as well.
    await db.schema.createIndex("proofs_queue_by_priority").on("proofs").columns(["status", "account_id", "priority_rank", "id"]).execute()
    await db.schema.dropIndex("proofs_queue").execute()
    // The sweep of queued proofs past their deadline; most proofs have none.
    await db.schema.createIndex("proofs_deadline").on("proofs").columns(["status", "deadline_at"])
      .where(sql.ref("deadline_at"), "is not", null).execute()
    // The usage report: an account's proofs created today, and those settled this month.
    await db.schema.createIndex("proofs_by_account_created").on("proofs").columns(["account_id", "created_at"]).execute()
    await db.schema.createIndex("proofs_by_account_settled").on("proofs").columns(["account_id", "completed_at"])
      .where(sql.ref("completed_at"), "is not", null).execute()
  }
})
