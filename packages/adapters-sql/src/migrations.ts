import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely"
import { Effect } from "effect"
import { StorageError } from "@mzk/core"
import type { SqlConnection } from "./connection.js"
import type { SqlDialect } from "./sqlDialect.js"

/**
 * Migrations live in code, in order, and never change once released: a new schema change is a new
 * entry. Kysely's migrator records what ran and takes a lock, so `migrate` is idempotent and safe
 * when several processes start at once. Where a column type is named differently, the dialect names it.
 */
const migrations = ({ columnTypes }: SqlDialect): Record<string, Migration> => {
  return {
    "0001_core": {
      up: async (db: Kysely<unknown>) => {
        await db.schema.createTable("accounts")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("created_at", "text", (c) => c.notNull())
          .execute()

        await db.schema.createTable("api_keys")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("description", "text")
          .addColumn("prefix", "text", (c) => c.notNull())
          .addColumn("scopes", "text", (c) => c.notNull())
          .addColumn("hash", "text", (c) => c.notNull().unique())
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("last_used_at", "text")
          .addColumn("revoked_at", "text")
          .execute()
        // Listing and the active-key limit read only active keys of one account.
        await db.schema.createIndex("api_keys_active_by_account").on("api_keys").columns(["account_id", "id"])
          .where(sql.ref("revoked_at"), "is", null).execute()

        await db.schema.createTable("webhooks")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("url", "text", (c) => c.notNull())
          .addColumn("events", "text", (c) => c.notNull())
          .addColumn("description", "text")
          .addColumn("active", "integer", (c) => c.notNull())
          .addColumn("disabled_reason", "text")
          .addColumn("secret", "text", (c) => c.notNull())
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("updated_at", "text", (c) => c.notNull())
          .execute()
        await db.schema.createIndex("webhooks_by_account").on("webhooks").columns(["account_id", "id"]).execute()

        await db.schema.createTable("events")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("type", "text", (c) => c.notNull())
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("data", "text", (c) => c.notNull())
          .execute()
        await db.schema.createIndex("events_by_account").on("events").columns(["account_id", "id"]).execute()

        await db.schema.createTable("deliveries")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("event_id", "text", (c) => c.notNull())
          .addColumn("webhook_id", "text", (c) => c.notNull())
          .addColumn("status", "text", (c) => c.notNull())
          .addColumn("attempts", "integer", (c) => c.notNull())
          .addColumn("next_attempt_at", "text")
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("updated_at", "text", (c) => c.notNull())
          .execute()
        await db.schema.createIndex("deliveries_by_event").on("deliveries").columns(["event_id", "id"]).execute()

        await db.schema.createTable("rate_counters")
          .addColumn("bucket", "text", (c) => c.primaryKey())
          .addColumn("window_start", columnTypes.int64, (c) => c.notNull())
          .addColumn("count", "integer", (c) => c.notNull())
          .execute()
      }
    },
    "0002_proofs": {
      up: async (db: Kysely<unknown>) => {
        await db.schema.createTable("proofs")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
          .addColumn("batch_id", "text")
          .addColumn("type", "text", (c) => c.notNull())
          .addColumn("circuit", "text", (c) => c.notNull())
          .addColumn("status", "text", (c) => c.notNull())
          .addColumn("inputs", "text")
          .addColumn("public_inputs", "text", (c) => c.notNull())
          .addColumn("proof_blob", "text")
          .addColumn("error", "text")
          .addColumn("duration_ms", "integer")
          .addColumn("attempts", "integer", (c) => c.notNull())
          .addColumn("lease_expires_at", "text")
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("started_at", "text")
          .addColumn("completed_at", "text")
          .addColumn("expires_at", "text")
          .execute()
        // get/list by account (optionally by status), the claim scan in id order, the per-account
        // running count, and the retention sweep by expiry.
        await db.schema.createIndex("proofs_by_account").on("proofs").columns(["account_id", "status", "id"]).execute()
        await db.schema.createIndex("proofs_by_account_id").on("proofs").columns(["account_id", "id"]).execute()
        await db.schema.createIndex("proofs_work").on("proofs").columns(["status", "id"]).execute()
        await db.schema.createIndex("proofs_expiry").on("proofs").columns(["status", "expires_at", "id"]).execute()
      }
    },
    "0003_delivery_engine": {
      up: async (db: Kysely<unknown>) => {
        for (const column of ["lease_expires_at", "first_failed_at", "last_attempt_at"]) {
          await db.schema.alterTable("deliveries").addColumn(column, "text").execute()
        }
        // The claim scan (due pending rows by time) and cancelling a webhook's pending rows.
        await db.schema.createIndex("deliveries_due").on("deliveries").columns(["status", "next_attempt_at", "id"]).execute()
        await db.schema.createIndex("deliveries_by_webhook").on("deliveries").columns(["webhook_id", "status"]).execute()
        await db.schema.createTable("delivery_attempts")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("delivery_id", "text", (c) => c.notNull())
          .addColumn("webhook_id", "text", (c) => c.notNull())
          .addColumn("event_id", "text", (c) => c.notNull())
          .addColumn("event_type", "text", (c) => c.notNull())
          .addColumn("attempt", "integer", (c) => c.notNull())
          .addColumn("attempted_at", "text", (c) => c.notNull())
          .addColumn("outcome", "text", (c) => c.notNull())
          .addColumn("status_code", "integer")
          .addColumn("error", "text")
          .addColumn("latency_ms", "integer", (c) => c.notNull())
          .addColumn("response_body", "text")
          .execute()
        await db.schema.createIndex("delivery_attempts_by_webhook").on("delivery_attempts")
          .columns(["account_id", "webhook_id", "id"]).execute()
      }
    },
    "0004_circuits": {
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
    },
    "0005_circuits_read_scope": {
      // Reading circuits needed no scope before `circuits:read` existed, so every key had that
      // power already: granting the scope keeps it and gives no key anything new. `circuits:write`
      // is a new power and is not granted.
      up: async (db: Kysely<unknown>) => {
        const keys = await sql<{ id: string; scopes: string }>`select id, scopes from api_keys`.execute(db)
        for (const key of keys.rows) {
          const scopes = JSON.parse(key.scopes) as Array<string>
          if (scopes.includes("circuits:read")) continue
          await sql`update api_keys set scopes = ${JSON.stringify([...scopes, "circuits:read"])} where id = ${key.id}`.execute(db)
        }
      }
    },
    "0006_idempotency_keys": {
      up: async (db: Kysely<unknown>) => {
        await db.schema.createTable("idempotency_keys")
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("key", "text", (c) => c.notNull())
          .addColumn("fingerprint", "text", (c) => c.notNull())
          .addColumn("request_id", "text", (c) => c.notNull())
          // Null while the request is in flight.
          .addColumn("response_status", "integer")
          .addColumn("response_headers", "text")
          .addColumn("response_body", "text")
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("expires_at", "text", (c) => c.notNull())
          .addColumn("locked_until", "text")
          // The claim's conflict target: one record per account and key.
          .addPrimaryKeyConstraint("idempotency_keys_pk", ["account_id", "key"])
          .execute()
        await db.schema.createIndex("idempotency_keys_expiry").on("idempotency_keys").columns(["expires_at"]).execute()
      }
    },
    "0007_key_expiry": {
      // Null for every existing key: none expires until told to.
      up: async (db: Kysely<unknown>) => {
        await db.schema.alterTable("api_keys").addColumn("expires_at", "text").execute()
      }
    },
    "0008_audit_log": {
      up: async (db: Kysely<unknown>) => {
        await db.schema.createTable("audit_log")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("action", "text", (c) => c.notNull())
          .addColumn("actor_type", "text", (c) => c.notNull())
          .addColumn("actor_id", "text")
          .addColumn("target_type", "text", (c) => c.notNull())
          .addColumn("target_id", "text", (c) => c.notNull())
          .addColumn("target_name", "text")
          .addColumn("request_id", "text")
          .addColumn("ip_address", "text")
          .addColumn("user_agent", "text")
          .addColumn("changes", "text")
          .addColumn("created_at", "text", (c) => c.notNull())
          .execute()
        // The listing (newest first), one resource's history, and retention.
        await db.schema.createIndex("audit_log_by_account").on("audit_log").columns(["account_id", "id"]).execute()
        await db.schema.createIndex("audit_log_by_target").on("audit_log").columns(["account_id", "target_id", "id"]).execute()
        await db.schema.createIndex("audit_log_by_time").on("audit_log").columns(["created_at"]).execute()
      }
    },
    "0009_proof_cancellation": {
      up: async (db: Kysely<unknown>) => {
        // Null for every existing proof: none was canceled.
        await db.schema.alterTable("proofs").addColumn("canceled_at", "text").execute()
        // A batch's proofs, read and canceled together; most proofs have no batch.
        await db.schema.createIndex("proofs_by_batch").on("proofs").columns(["batch_id", "id"])
          .where(sql.ref("batch_id"), "is not", null).execute()
      }
    },
    "0010_webhook_secret_rotation": {
      // The secret a rotation replaced and when it stops signing; null for every existing webhook,
      // which has never been rotated.
      up: async (db: Kysely<unknown>) => {
        await db.schema.alterTable("webhooks").addColumn("previous_secret", "text").execute()
        await db.schema.alterTable("webhooks").addColumn("previous_secret_expires_at", "text").execute()
      }
    },
    "0011_events_api": {
      up: async (db: Kysely<unknown>) => {
        // What queued a delivery's attempts; every existing one came from its event's schedule.
        for (const table of ["deliveries", "delivery_attempts"]) {
          await db.schema.alterTable(table).addColumn("trigger", "text", (c) => c.notNull().defaultTo("scheduled")).execute()
        }
        // GET /events: an account's events newest first, by type, and by creation time.
        await db.schema.createIndex("events_by_account_type").on("events").columns(["account_id", "type", "id"]).execute()
        await db.schema.createIndex("events_by_account_created").on("events").columns(["account_id", "created_at"]).execute()
        // The retention sweep's scan, oldest first over every account.
        await db.schema.createIndex("events_by_created").on("events").columns(["created_at", "id"]).execute()
        // The sweep deletes the attempts of the deliveries it deletes.
        await db.schema.createIndex("delivery_attempts_by_event").on("delivery_attempts").columns(["event_id", "delivery_id"]).execute()
        // A recovery's batches: one webhook's failed and cancelled deliveries in id order.
        await db.schema.createIndex("deliveries_by_webhook_status_id").on("deliveries").columns(["webhook_id", "status", "id"]).execute()

        await db.schema.createTable("webhook_recoveries")
          .addColumn("id", "text", (c) => c.primaryKey())
          .addColumn("account_id", "text", (c) => c.notNull())
          .addColumn("webhook_id", "text", (c) => c.notNull())
          .addColumn("status", "text", (c) => c.notNull())
          .addColumn("since", "text", (c) => c.notNull())
          .addColumn("until", "text", (c) => c.notNull())
          .addColumn("requeued", "integer", (c) => c.notNull())
          .addColumn("cursor", "text")
          .addColumn("lease_expires_at", "text")
          .addColumn("created_at", "text", (c) => c.notNull())
          .addColumn("updated_at", "text", (c) => c.notNull())
          .addColumn("completed_at", "text")
          .execute()
        await db.schema.createIndex("webhook_recoveries_by_webhook").on("webhook_recoveries").columns(["account_id", "webhook_id", "id"]).execute()
        // The claim's scan: running recoveries, least recently advanced first.
        await db.schema.createIndex("webhook_recoveries_work").on("webhook_recoveries").columns(["status", "updated_at", "id"]).execute()
        // Retention: recoveries that ended before the window.
        await db.schema.createIndex("webhook_recoveries_ended").on("webhook_recoveries").columns(["completed_at"]).execute()
      }
    },
    "0012_key_replaced_by": {
      // The key a roll made to replace this one: a key is rolled once. Null for every existing key,
      // rolled or not; one rolled before this column existed may be rolled once more.
      up: async (db: Kysely<unknown>) => {
        await db.schema.alterTable("api_keys").addColumn("replaced_by", "text").execute()
      }
    },
    "0013_readiness_probe": {
      // One row that readiness rewrites: a write the database must take for the process to be ready.
      up: async (db: Kysely<unknown>) => {
        await db.schema.createTable("readiness_probe")
          .addColumn("id", "integer", (c) => c.primaryKey())
          .addColumn("probed_at", "text", (c) => c.notNull())
          .execute()
      }
    },
    "0014_proof_queue_by_account": {
      // Proof claims take turns across accounts: they step from each account with queued proofs
      // to the next, and to its oldest, in this index, instead of reading every queued proof.
      up: async (db: Kysely<unknown>) => {
        await db.schema.createIndex("proofs_queue").on("proofs").columns(["status", "account_id", "id"]).execute()
      }
    }
  }
}

const migratorOf = (conn: SqlConnection) =>
  new Migrator({ db: conn.db as Kysely<unknown>, provider: { getMigrations: async () => migrations(conn.dialect) } satisfies MigrationProvider })

export interface MigrationReport {
  /** Names of the migrations this call applied; empty when the schema was already current. */
  readonly applied: ReadonlyArray<string>
}

/**
 * Applies the pending migrations over the connection's root handle, in its dialect's column types:
 * all of them, or those up to and including `upTo` (for tests of a migration over older data).
 */
export const migrate = (conn: SqlConnection, upTo?: string): Effect.Effect<MigrationReport, StorageError> =>
  Effect.gen(function*() {
    const migrator = migratorOf(conn)
    const { error, results } = yield* Effect.tryPromise({
      try: () => (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo)),
      catch: (cause) => new StorageError({ message: "Database migration failed", cause })
    })
    if (error !== undefined) return yield* new StorageError({ message: "Database migration failed", cause: error })
    return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) }
  })

/**
 * The migrations the database has not applied: one read of Kysely's migration table, also the
 * readiness probe's round trip (Kysely's own `getMigrations` introspects every table first, too
 * much for a probe anyone may call). A database without the table has applied none.
 */
export const pendingMigrations = (conn: SqlConnection): Effect.Effect<ReadonlyArray<string>, StorageError> =>
  Effect.tryPromise({
    try: async () => {
      const known = Object.keys(migrations(conn.dialect))
      try {
        const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(conn.db)
        const applied = new Set(rows.map((row) => row.name))
        return known.filter((name) => !applied.has(name))
      } catch (cause) {
        // The table is missing only before the first migration; anything else is the database failing.
        const missing = await sql`select 1`.execute(conn.db).then(() => true, () => false)
        if (missing) return known
        throw cause
      }
    },
    catch: (cause) => conn.storageError(cause, "the database could not be reached")
  })
