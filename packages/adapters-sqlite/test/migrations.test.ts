import { MIGRATIONS, migrate, pendingMigrations } from "@mzk/adapters-sql"
import { openSqlite, SqliteStore } from "@mzk/adapters-sqlite"
import { Accounts } from "@mzk/core"
import { PROOFS_AFTER_0021, PROOFS_BEFORE_0021 } from "@mzk/storage-conformance"
import { testCore } from "@mzk/testkit"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { sql } from "kysely"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** A database as 0007 left it, holding one account: where the later migrations' tests start. */
const atKeyExpiry = Effect.gen(function*() {
  const conn = yield* openSqlite({ filename: ":memory:" })
  yield* migrate(conn, "0007_key_expiry")
  const at = "2026-01-01T00:00:00.000Z"
  yield* conn.query((db) => db.insertInto("accounts").values({ id: "acct_1", name: "Old", created_at: at }).execute())
  return { at, conn }
})

/** The names released databases have recorded, in order: they must never change. */
const RELEASED = [
  "0001_core",
  "0002_proofs",
  "0003_delivery_engine",
  "0004_circuits",
  "0005_circuits_read_scope",
  "0006_idempotency_keys",
  "0007_key_expiry",
  "0008_audit_log",
  "0009_proof_cancellation",
  "0010_webhook_secret_rotation",
  "0011_events_api",
  "0012_key_replaced_by",
  "0013_readiness_probe",
  "0014_proof_queue_by_account",
  "0015_proving_systems",
  "0016_verification_keys",
  "0017_metadata",
  "0019_proof_scheduling",
  "0020_circuit_versions"
]

describe("migrations, one file each", () => {
  it("keep the released names and order; every file under migrations/ is one of them, named as recorded", () => {
    const names = MIGRATIONS.map(([name]) => name)
    expect(names.slice(0, RELEASED.length)).toEqual(RELEASED)
    expect([...names].sort()).toEqual(names)
    const folder = fileURLToPath(new URL("../../adapters-sql/src/migrations/", import.meta.url))
    const files = readdirSync(folder).filter((file) => file !== "index.ts").map((file) => file.replace(/\.ts$/, ""))
    expect(files.sort()).toEqual(names)
  })

  it.scoped("a database that recorded the released names is current: nothing pending, nothing applied again", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      yield* migrate(conn, RELEASED[RELEASED.length - 1])
      const recorded = yield* conn.query((db) => sql<{ name: string }>`select name from kysely_migration order by name`.execute(db))
      expect(recorded.rows.map((row) => row.name)).toEqual(RELEASED)
      // What a database migrated before the split holds is what the index asks for.
      expect(yield* pendingMigrations(conn)).toEqual(MIGRATIONS.slice(RELEASED.length).map(([name]) => name))
      expect((yield* migrate(conn)).applied).toEqual(MIGRATIONS.slice(RELEASED.length).map(([name]) => name))
    }))
})

describe("SQLite store", () => {
  it.scoped("migrate applies everything once; a second migrate does nothing", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      // A new database has no migration table yet: every migration is pending.
      const before = yield* pendingMigrations(conn)
      const first = yield* migrate(conn)
      expect(first.applied.length).toBeGreaterThan(0)
      expect(before).toEqual(first.applied)
      expect((yield* migrate(conn)).applied).toEqual([])
      expect(yield* pendingMigrations(conn)).toEqual([])
      const journal = yield* conn.query((db) => db.selectFrom("pragma_journal_mode" as never).selectAll().execute())
      expect(journal).toEqual([{ journal_mode: "memory" }])
    }))

  it.scoped("the circuits migrations grant circuits:read (not circuits:write) to existing keys and leave old proofs on built-ins", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      expect((yield* migrate(conn, "0003_delivery_engine")).applied).toHaveLength(3)
      // What readiness reports until `mzk migrate` runs.
      expect((yield* pendingMigrations(conn)).slice(0, 2)).toEqual(["0004_circuits", "0005_circuits_read_scope"])
      const at = "2026-01-01T00:00:00.000Z"
      const old = ["keys:read", "keys:write", "webhooks:read", "webhooks:write", "proofs:read", "proofs:write"]
      yield* conn.query(async (db) => {
        await db.insertInto("accounts").values({ id: "acct_1", name: "Old", created_at: at }).execute()
        for (const [id, scopes] of [["key_1", old], ["key_2", ["proofs:read"]]] as const) {
          await db.insertInto("api_keys").values({
            id, account_id: "acct_1", name: id, description: null, prefix: `mzk_${id}`, scopes: JSON.stringify(scopes),
            hash: `hash-${id}`, created_at: at, last_used_at: null, revoked_at: null
          } as never).execute()
        }
        await db.insertInto("proofs").values({
          id: "proof_1", account_id: "acct_1", batch_id: null, type: "multiplier", circuit: "multiplier", status: "completed",
          inputs: null, public_inputs: "{}", proof_blob: null, error: null, duration_ms: 1, attempts: 1, lease_expires_at: null,
          created_at: at, started_at: at, completed_at: at, expires_at: null
        } as never).execute()
      })
      expect((yield* migrate(conn, "0005_circuits_read_scope")).applied).toEqual(["0004_circuits", "0005_circuits_read_scope"])
      expect(yield* pendingMigrations(conn)).not.toContain("0005_circuits_read_scope")
      const keys = yield* conn.query((db) => db.selectFrom("api_keys").select(["id", "scopes"]).orderBy("id").execute())
      expect(keys.map((k) => [k.id, JSON.parse(k.scopes)])).toEqual([["key_1", [...old, "circuits:read"]], ["key_2", ["proofs:read", "circuits:read"]]])
      const proofs = yield* conn.query((db) => db.selectFrom("proofs").select(["id", "circuit_id"]).execute())
      expect(proofs).toEqual([{ id: "proof_1", circuit_id: null }])
    }))

  it.scoped("0020_circuit_versions numbers each name's rows in upload order (a removed and re-uploaded name: 1, 2) and gives proofs their circuit's", () =>
    Effect.gen(function*() {
      const { at, conn } = yield* atKeyExpiry
      expect((yield* migrate(conn, "0019_proof_scheduling")).applied).toContain("0019_proof_scheduling")
      const circuit = (id: string, name: string, removed: boolean) => ({
        id, account_id: "acct_1", name, status: "ready", error: null, description: null, constraints: 1, inputs: "[]",
        public_signals: "[]", verification_key: null, development_only: 0, field_modulus: "1", artifacts: null,
        source: "{}", lease_expires_at: null, attempts: 1, created_at: at, updated_at: at, removed_at: removed ? at : null
      })
      yield* conn.query(async (db) => {
        await db.insertInto("circuits").values([
          circuit("circuit_01", "squares", true),
          circuit("circuit_02", "other", false),
          circuit("circuit_03", "squares", false)
        ] as never).execute()
        await db.insertInto("proofs").values(["circuit_01", "circuit_03", null].map((circuitId, i) => ({
          id: `proof_${i}`, account_id: "acct_1", batch_id: null, type: circuitId === null ? "multiplier" : "squares",
          circuit: circuitId === null ? "multiplier" : "squares", circuit_id: circuitId, status: "completed", inputs: null,
          public_inputs: "{}", proof_blob: null, error: null, duration_ms: 1, attempts: 1, lease_expires_at: null, created_at: at,
          started_at: at, completed_at: at, expires_at: null
        })) as never).execute()
      })
      expect((yield* migrate(conn, "0020_circuit_versions")).applied).toEqual(["0020_circuit_versions"])
      const circuits = yield* conn.query((db) => db.selectFrom("circuits").select(["id", "version"]).orderBy("id").execute())
      expect(circuits).toEqual([{ id: "circuit_01", version: 1 }, { id: "circuit_02", version: 1 }, { id: "circuit_03", version: 2 }])
      const proofs = yield* conn.query((db) => db.selectFrom("proofs").select(["id", "circuit_version"]).orderBy("id").execute())
      expect(proofs).toEqual([{ id: "proof_0", circuit_version: 1 }, { id: "proof_1", circuit_version: 2 }, { id: "proof_2", circuit_version: 1 }])
      // Both live rows of a name may now coexist; a version may not be given twice.
      const again = yield* conn.query((db) => db.insertInto("circuits").values({ ...circuit("circuit_04", "squares", false), version: 2 } as never).execute())
        .pipe(Effect.either)
      expect(again._tag).toBe("Left")
    }))

  it.scoped("0021_proof_timeline: finished_at for every settled proof, completed_at a completion's only, no start for a proof claimed past its deadline", () =>
    Effect.gen(function*() {
      const { at, conn } = yield* atKeyExpiry
      yield* migrate(conn, "0020_circuit_versions")
      yield* conn.query((db) => db.insertInto("proofs").values(PROOFS_BEFORE_0021(at) as never).execute())
      expect((yield* migrate(conn)).applied).toContain("0021_proof_timeline")
      const rows = yield* conn.query((db) =>
        db.selectFrom("proofs").select(["id", "started_at", "completed_at", "finished_at", "duration_ms"]).orderBy("id").execute()
      )
      expect(rows).toEqual(PROOFS_AFTER_0021(at))
    }))

  it.scoped("0009 gives existing proofs no canceled_at, and a batch's proofs are read through its index", () =>
    Effect.gen(function*() {
      const { at, conn } = yield* atKeyExpiry
      yield* conn.query(async (db) => {
        await db.insertInto("proofs").values({
          id: "proof_1", account_id: "acct_1", batch_id: "batch_1", type: "multiplier", circuit: "multiplier", circuit_id: null,
          status: "queued", inputs: "{}", public_inputs: "{}", proof_blob: null, error: null, duration_ms: null, attempts: 0,
          lease_expires_at: null, created_at: at, started_at: null, completed_at: null, expires_at: null
        } as never).execute()
      })
      expect((yield* migrate(conn)).applied).toContain("0009_proof_cancellation")
      const proofs = yield* conn.query((db) => db.selectFrom("proofs").select(["id", "status", "canceled_at"]).execute())
      expect(proofs).toEqual([{ id: "proof_1", status: "queued", canceled_at: null }])
      const plan = yield* conn.query((db) =>
        sql<{ detail: string }>`explain query plan select * from proofs where batch_id = ${"batch_1"} and account_id = ${"acct_1"} order by id`
          .execute(db))
      expect(plan.rows.map((row) => row.detail).join("; ")).toContain("proofs_by_batch")
    }))

  it.scoped("webhooks made before secret rotation existed have no previous secret after 0010", () =>
    Effect.gen(function*() {
      const { at, conn } = yield* atKeyExpiry
      yield* conn.query(async (db) => {
        await db.insertInto("webhooks").values({
          id: "wh_1", account_id: "acct_1", url: "https://hooks.example.com/", events: "[\"key.created\"]", description: null,
          active: 1, disabled_reason: null, secret: "whsec_old", created_at: at, updated_at: at
        } as never).execute()
      })
      expect((yield* migrate(conn)).applied).toContain("0010_webhook_secret_rotation")
      const rows = yield* conn.query((db) => db.selectFrom("webhooks").select(["id", "secret", "previous_secret", "previous_secret_expires_at"]).execute())
      expect(rows).toEqual([{ id: "wh_1", secret: "whsec_old", previous_secret: null, previous_secret_expires_at: null }])
    }))

  it.scoped("0011_events_api: deliveries and attempts made before it came from the schedule; no key gains events:read", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      yield* migrate(conn, "0007_key_expiry")
      const at = "2026-01-01T00:00:00.000Z"
      const scopes = JSON.stringify(["keys:read", "proofs:read", "circuits:read", "circuits:write"])
      yield* conn.query(async (db) => {
        await db.insertInto("accounts").values({ id: "acct_1", name: "Old", created_at: at }).execute()
        await db.insertInto("api_keys").values({
          id: "key_1", account_id: "acct_1", name: "k", description: null, prefix: "mzk_k", scopes, hash: "h", created_at: at,
          last_used_at: null, revoked_at: null, expires_at: null
        }).execute()
        await db.insertInto("deliveries").values({
          id: "del_1", account_id: "acct_1", event_id: "evt_1", webhook_id: "wh_1", status: "failed", attempts: 6, next_attempt_at: null,
          lease_expires_at: null, first_failed_at: at, last_attempt_at: at, created_at: at, updated_at: at
        } as never).execute()
        await db.insertInto("delivery_attempts").values({
          id: "att_1", account_id: "acct_1", delivery_id: "del_1", webhook_id: "wh_1", event_id: "evt_1", event_type: "key.created",
          attempt: 1, attempted_at: at, outcome: "failed", status_code: 500, error: null, latency_ms: 3, response_body: null
        } as never).execute()
      })
      expect((yield* migrate(conn)).applied).toContain("0011_events_api")
      const rows = yield* conn.query(async (db) => [
        await db.selectFrom("deliveries").select(["id", "trigger"]).execute(),
        await db.selectFrom("delivery_attempts").select(["id", "trigger"]).execute(),
        await db.selectFrom("api_keys").select(["id", "scopes"]).execute()
      ])
      expect(rows).toEqual([[{ id: "del_1", trigger: "scheduled" }], [{ id: "att_1", trigger: "scheduled" }], [{ id: "key_1", scopes }]])
    }))

  it.scoped("0012_key_replaced_by: a key made before it was replaced by nothing, so it can be rolled", () =>
    Effect.gen(function*() {
      const conn = yield* openSqlite({ filename: ":memory:" })
      yield* migrate(conn, "0011_events_api")
      const at = "2026-01-01T00:00:00.000Z"
      yield* conn.query(async (db) => {
        await db.insertInto("accounts").values({ id: "acct_1", name: "Old", created_at: at }).execute()
        await db.insertInto("api_keys").values({
          id: "key_1", account_id: "acct_1", name: "k", description: null, prefix: "mzk_k", scopes: "[]", hash: "h", created_at: at,
          last_used_at: null, revoked_at: null, expires_at: "2026-02-01T00:00:00.000Z"
        } as never).execute()
      })
      expect((yield* migrate(conn)).applied).toContain("0012_key_replaced_by")
      const rows = yield* conn.query((db) => db.selectFrom("api_keys").select(["id", "expires_at", "replaced_by"]).execute())
      expect(rows).toEqual([{ id: "key_1", expires_at: "2026-02-01T00:00:00.000Z", replaced_by: null }])
    }))

  it.effect("data survives closing and reopening the file (WAL mode on disk)", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-reopen-"))
      const filename = join(dir, "nested", "mzk.db")
      const layer = (seed: number) => testCore(SqliteStore({ filename }), { seed })
      const account = yield* Effect.scoped(Effect.flatMap(Accounts, (a) => a.create({ name: "Durable" })).pipe(Effect.provide(layer(1))))
      const found = yield* Effect.flatMap(Accounts, (a) => a.get(account.id)).pipe(Effect.provide(layer(2)))
      expect(found).toEqual(Option.some(account))
      const mode = yield* Effect.scoped(Effect.flatMap(openSqlite({ filename }), (conn) =>
        conn.query((db) => db.selectFrom("pragma_journal_mode" as never).selectAll().execute())))
      expect(mode).toEqual([{ journal_mode: "wal" }])
      rmSync(dir, { recursive: true, force: true })
    }))
})
