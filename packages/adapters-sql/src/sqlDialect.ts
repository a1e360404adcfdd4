import type { DeliveriesRepo, Metadata, MetadataPatch } from "@mzk/core"
import type { Context } from "effect"
import type { Expression, Kysely, RawBuilder, SelectQueryBuilder, SqlBool } from "kysely"

// The parts a dialect is made of. `SqlDialect` itself is in connection.ts, beside the connection
// that carries it and that its operations run on: each names the other.

/**
 * What a write can announce to the loops of other processes: work for their idle loops, or
 * (`canceledProofs`) running proofs canceled, which their proof workers stop.
 */
export type WorkKind = "proofs" | "deliveries" | "circuits" | "recoveries" | "canceledProofs"

/** What `DeliveriesRepo.claimDue` asks for: due deliveries, at most `maxPerWebhook` of each webhook, in turns across accounts. */
export type DeliveryClaim = Parameters<Context.Tag.Service<typeof DeliveriesRepo>["claimDue"]>[0]

/** Leaves a read as it is, or makes it hold the rows it returns: applied when a query or statement is built. */
export type RowLocking = <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, O>

/**
 * Metadata is JSON text in every dialect, as every structured column is; what reads into it is the
 * dialect's own JSON function.
 */
export interface MetadataSql {
  /** A condition: the row's `metadata` column holds every pair of `filter` (keys are `metadataKeyProblem`-clean). */
  readonly matches: (filter: Metadata) => Expression<SqlBool>
  /** The column's new value: the stored pairs with `patch` laid over them (a null value deletes its key). */
  readonly merged: (patch: MetadataPatch) => RawBuilder<string>
  /** Makes what serves `matches` on `table` (run by the migration that adds the column), or nothing. */
  readonly index: (db: Kysely<unknown>, table: string) => Promise<void>
}
