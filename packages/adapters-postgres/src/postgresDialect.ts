import type { SqlDialect } from "@mzk/adapters-sql"
import { accountLockedProofPick, skipLockedDeliveryPick } from "./claims.js"
import { describePostgresFailure } from "./failures.js"
import { postgresMetadata } from "./metadata.js"
import { forShare, forUpdate, forUpdateSkipLocked, lockAccounts } from "./rowLocks.js"
import { notifyWork } from "./wakeups.js"

/**
 * PostgreSQL's ways. Many processes write the same tables at once, so the sections that must not
 * interleave hold row locks (`FOR UPDATE`), claims take rows with `SKIP LOCKED` (or serialise per
 * account), and new work is announced with NOTIFY to the loops of the other processes.
 */
export const postgresSqlDialect: SqlDialect = {
  columnTypes: { int64: "bigint", bytes: "bytea" },
  lockRows: forUpdate,
  shareRows: forShare,
  takeRows: forUpdateSkipLocked,
  lockAccounts,
  pickDeliveries: skipLockedDeliveryPick,
  pickProofs: accountLockedProofPick,
  announce: notifyWork,
  describeFailure: describePostgresFailure,
  metadata: postgresMetadata
}
