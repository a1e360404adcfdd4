import { migrate } from "@mzk/adapters-sql"
import { openPostgres } from "@mzk/adapters-postgres"
import { expect, it } from "@effect/vitest"
import { PROOFS_AFTER_0021, PROOFS_BEFORE_0021 } from "@mzk/storage-conformance"
import { Effect } from "effect"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"

describePostgres("Postgres store", () => {
  it.scoped("migrate applies everything once; a second and a concurrent migrate do nothing", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const a = yield* openPostgres({ connectionString: url })
      const b = yield* openPostgres({ connectionString: url })
      const [first, second] = yield* Effect.all([migrate(a), migrate(b)], { concurrency: 2 })
      const applied = [...first.applied, ...second.applied].sort()
      expect(applied).toEqual(["0001_core", "0002_proofs", "0003_delivery_engine", "0004_circuits", "0005_circuits_read_scope", "0006_idempotency_keys", "0007_key_expiry", "0008_audit_log", "0009_proof_cancellation", "0010_webhook_secret_rotation", "0011_events_api", "0012_key_replaced_by", "0013_readiness_probe", "0014_proof_queue_by_account", "0015_proving_systems", "0016_verification_keys", "0017_metadata", "0019_proof_scheduling", "0020_circuit_versions", "0021_proof_timeline"])
      // One process applied them all; the other found the lock and then nothing to do.
      expect([first.applied.length, second.applied.length].sort()).toEqual([0, applied.length])
      expect((yield* migrate(a)).applied).toEqual([])
    }), 30_000)

  it.scoped("0021_proof_timeline: finished_at for every settled proof, completed_at a completion's only, no start for a proof claimed past its deadline", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const conn = yield* openPostgres({ connectionString: url })
      yield* migrate(conn, "0020_circuit_versions")
      const at = "2026-01-01T00:00:00.000Z"
      yield* conn.query(async (db) => {
        await db.insertInto("accounts").values({ id: "acct_1", name: "Old", created_at: at }).execute()
        await db.insertInto("proofs").values(PROOFS_BEFORE_0021(at) as never).execute()
      })
      expect((yield* migrate(conn)).applied).toEqual(["0021_proof_timeline"])
      const rows = yield* conn.query((db) =>
        db.selectFrom("proofs").select(["id", "started_at", "completed_at", "finished_at", "duration_ms"]).orderBy("id").execute()
      )
      expect(rows.map((row) => ({ ...row, duration_ms: row.duration_ms === null ? null : Number(row.duration_ms) }))).toEqual(PROOFS_AFTER_0021(at))
    }), 30_000)
})
