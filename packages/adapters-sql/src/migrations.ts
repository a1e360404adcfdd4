import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely"
import { Effect } from "effect"
import { StorageError } from "@mzk/core"
import type { Database, Dialect } from "./schema.js"

/**
 * Migrations live in code, in order, and never change once released: a new schema change is a new
 * entry. Kysely's migrator records what ran and takes a lock, so `migrate` is idempotent and safe
 * when several processes start at once.
 */
const migrations = (dialect: Dialect): Record<string, Migration> => {
  const bigint = dialect === "postgres" ? "bigint" : "integer"
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
          .addColumn("window_start", sql.raw(bigint), (c) => c.notNull())
          .addColumn("count", "integer", (c) => c.notNull())
          .execute()
      }
    }
  }
}

export interface MigrationReport {
  /** Names of the migrations this call applied; empty when the schema was already current. */
  readonly applied: ReadonlyArray<string>
}

export const migrate = (db: Kysely<Database>, dialect: Dialect): Effect.Effect<MigrationReport, StorageError> =>
  Effect.gen(function*() {
    const provider: MigrationProvider = { getMigrations: async () => migrations(dialect) }
    const { error, results } = yield* Effect.tryPromise({
      try: () => new Migrator({ db: db as Kysely<unknown>, provider }).migrateToLatest(),
      catch: (cause) => new StorageError({ message: "Database migration failed", cause })
    })
    if (error !== undefined) return yield* new StorageError({ message: "Database migration failed", cause: error })
    return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) }
  })
