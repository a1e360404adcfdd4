import { type Kysely, type Migration, sql } from "kysely"

export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    // Null for every existing proof: none was canceled.
    await db.schema.alterTable("proofs").addColumn("canceled_at", "text").execute()
    // A batch's proofs, read and canceled together; most proofs have no batch.
    await db.schema.createIndex("proofs_by_batch").on("proofs").columns(["batch_id", "id"])
      .where(sql.ref("batch_id"), "is not", null).execute()
  }
})
