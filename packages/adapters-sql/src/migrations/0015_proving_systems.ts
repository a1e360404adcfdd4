import { type Kysely, type Migration } from "kysely"

// The proof system of each circuit and proof: every row before this one is Groth16, the only
// system there was, so the default fills them in.
export const migration = (): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.alterTable("circuits").addColumn("proving_system", "text", (c) => c.notNull().defaultTo("groth16")).execute()
    await db.schema.alterTable("proofs").addColumn("proving_system", "text", (c) => c.notNull().defaultTo("groth16")).execute()
  }
})
