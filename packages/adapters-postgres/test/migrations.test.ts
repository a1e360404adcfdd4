import { migrate } from "@mzk/adapters-sql"
import { openPostgres } from "@mzk/adapters-postgres"
import { expect, it } from "@effect/vitest"
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
      expect(applied).toEqual(["0001_core", "0002_proofs", "0003_delivery_engine", "0004_circuits", "0005_circuits_read_scope", "0006_idempotency_keys", "0007_key_expiry", "0008_audit_log", "0009_proof_cancellation", "0010_webhook_secret_rotation", "0011_events_api", "0012_key_replaced_by", "0013_readiness_probe", "0014_proof_queue_by_account", "0015_proving_systems", "0016_verification_keys", "0017_metadata", "0019_proof_scheduling", "0020_circuit_versions"])
      // One process applied them all; the other found the lock and then nothing to do.
      expect([first.applied.length, second.applied.length].sort()).toEqual([0, applied.length])
      expect((yield* migrate(a)).applied).toEqual([])
    }), 30_000)
})
