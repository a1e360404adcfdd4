import type { Migration } from "kysely"
import type { SqlDialect } from "../connection.js"
import { migration as m0001 } from "./0001_core.js"
import { migration as m0002 } from "./0002_proofs.js"
import { migration as m0003 } from "./0003_delivery_engine.js"
import { migration as m0004 } from "./0004_circuits.js"
import { migration as m0005 } from "./0005_circuits_read_scope.js"
import { migration as m0006 } from "./0006_idempotency_keys.js"
import { migration as m0007 } from "./0007_key_expiry.js"
import { migration as m0008 } from "./0008_audit_log.js"
import { migration as m0009 } from "./0009_proof_cancellation.js"
import { migration as m0010 } from "./0010_webhook_secret_rotation.js"
import { migration as m0011 } from "./0011_events_api.js"
import { migration as m0012 } from "./0012_key_replaced_by.js"
import { migration as m0013 } from "./0013_readiness_probe.js"
import { migration as m0014 } from "./0014_proof_queue_by_account.js"
import { migration as m0015 } from "./0015_proving_systems.js"
import { migration as m0016 } from "./0016_verification_keys.js"
import { migration as m0017 } from "./0017_metadata.js"
import { migration as m0019 } from "./0019_proof_scheduling.js"
import { migration as m0020 } from "./0020_circuit_versions.js"
import { migration as m0021 } from "./0021_proof_timeline.js"

/**
 * Every migration, in the order they run. A name is recorded in every database that ran it, so a
 * released migration keeps its name, its file (`<name>.ts`, the same name) and its place; a new
 * schema change is a new file, added at the end here.
 */
export const MIGRATIONS: ReadonlyArray<readonly [name: string, migration: (dialect: SqlDialect) => Migration]> = [
  ["0001_core", m0001],
  ["0002_proofs", m0002],
  ["0003_delivery_engine", m0003],
  ["0004_circuits", m0004],
  ["0005_circuits_read_scope", m0005],
  ["0006_idempotency_keys", m0006],
  ["0007_key_expiry", m0007],
  ["0008_audit_log", m0008],
  ["0009_proof_cancellation", m0009],
  ["0010_webhook_secret_rotation", m0010],
  ["0011_events_api", m0011],
  ["0012_key_replaced_by", m0012],
  ["0013_readiness_probe", m0013],
  ["0014_proof_queue_by_account", m0014],
  ["0015_proving_systems", m0015],
  ["0016_verification_keys", m0016],
  ["0017_metadata", m0017],
  ["0019_proof_scheduling", m0019],
  ["0020_circuit_versions", m0020],
  ["0021_proof_timeline", m0021]
]

/** The migrations in the dialect's column types, by name, as Kysely's migrator takes them. */
export const migrationsFor = (dialect: SqlDialect): Record<string, Migration> =>
  Object.fromEntries(MIGRATIONS.map(([name, migration]) => [name, migration(dialect)]))
