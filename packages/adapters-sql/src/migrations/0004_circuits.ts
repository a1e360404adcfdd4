import { type Kysely, type Migration, sql } from "kysely"
import type { SqlDialect } from "../connection.js"

export const migration = ({ columnTypes }: SqlDialect): Migration => ({
  up: async (db: Kysely<unknown>) => {
    await db.schema.createTable("circuits")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("error", "text")
      .addColumn("description", "text")
      .addColumn("constraints", "integer")
      .addColumn("inputs", "text", (c) => c.notNull())
      .addColumn("public_signals", "text", (c) => c.notNull())
      .addColumn("verification_key", "text")
      .addColumn("development_only", "integer", (c) => c.notNull())
      .addColumn("field_modulus", "text", (c) => c.notNull())
      .addColumn("artifacts", "text")
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("lease_expires_at", "text")
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("removed_at", "text")
      .execute()
    // A name is taken only by a live circuit: a removed one frees it, its row kept for its proofs.
    await db.schema.createIndex("circuits_live_name").on("circuits").columns(["account_id", "name"]).unique()
      .where(sql.ref("removed_at"), "is", null).execute()
    await db.schema.createIndex("circuits_by_account").on("circuits").columns(["account_id", "id"]).execute()
    // The build claim's scan: compiling circuits in id order.
    await db.schema.createIndex("circuits_work").on("circuits").columns(["status", "id"]).execute()

    await db.schema.createTable("circuit_artifacts")
      .addColumn("circuit_id", "text", (c) => c.notNull())
      .addColumn("digest", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("circuit_artifacts_pk", ["circuit_id", "digest"])
      .execute()
    await db.schema.createIndex("circuit_artifacts_by_digest").on("circuit_artifacts").columns(["digest", "circuit_id"]).execute()

    await db.schema.createTable("artifacts")
      .addColumn("digest", "text", (c) => c.primaryKey())
      .addColumn("size", columnTypes.int64, (c) => c.notNull())
      .addColumn("chunks", "integer", (c) => c.notNull())
      .execute()
    await db.schema.createTable("artifact_chunks")
      .addColumn("digest", "text", (c) => c.notNull())
      .addColumn("idx", "integer", (c) => c.notNull())
      .addColumn("data", columnTypes.bytes, (c) => c.notNull())
      .addPrimaryKeyConstraint("artifact_chunks_pk", ["digest", "idx"])
      .execute()

    // Null for proofs of built-in circuits, and for every proof made before accounts had circuits.
    await db.schema.alterTable("proofs").addColumn("circuit_id", "text").execute()
    // Removal's check for queued or running proofs of the circuit.
    await db.schema.createIndex("proofs_by_circuit").on("proofs").columns(["circuit_id", "status"]).execute()
  }
})
