import { type Kysely, type Migration } from "kysely"

// Verification of proofs made elsewhere (POST /verifications): the keys accounts register once,
// and the digest by which a proof mzk made is recognised when it comes back (null for proofs
// completed before this column: they are verified as foreign ones, without `proof.verified`).
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createTable("verification_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull())
      .addColumn("name", "text")
      .addColumn("proving_system", "text", (c) => c.notNull())
      .addColumn("n_public", "integer", (c) => c.notNull())
      .addColumn("verification_key", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("verification_keys_by_account").on("verification_keys").columns(["account_id", "id"]).execute()

    await db.schema.alterTable("proofs").addColumn("proof_digest", "text").execute()
    await db.schema.createIndex("proofs_by_account_digest").on("proofs").columns(["account_id", "proof_digest"]).execute()
  }
})
