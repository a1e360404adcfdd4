import { type Kysely, type Migration } from "kysely"

// Proof claims take turns across accounts: they step from each account with queued proofs
// to the next, and to its oldest, in this index, instead of reading every queued proof.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createIndex("proofs_queue").on("proofs").columns(["status", "account_id", "id"]).execute()
  }
})
