import { type AccountId, type IdempotencyRecord, IdempotencyRepo, type StorageError, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Selectable } from "kysely"
import type { SqlConnection } from "../connection.js"
import type { IdempotencyKeysTable } from "../schema.js"

const toRecord = (row: Selectable<IdempotencyKeysTable>): IdempotencyRecord => ({
  account_id: row.account_id as AccountId,
  key: row.key,
  fingerprint: row.fingerprint,
  request_id: row.request_id,
  response: row.response_status === null
    ? null
    : { status: Number(row.response_status), headers: JSON.parse(row.response_headers ?? "{}"), body: row.response_body },
  created_at: row.created_at as Timestamp,
  expires_at: row.expires_at as Timestamp,
  locked_until: row.locked_until as Timestamp | null
})

export const sqlIdempotency = (conn: SqlConnection) => {
  /**
   * A claim is an insert that does nothing on conflict (a concurrent, uncommitted insert of
   * the same key is waited for), then, for a key already there, a takeover conditional on the
   * record being expired or in flight under a lapsed lock. Each step is one atomic statement, so
   * of concurrent claims exactly one stores its record; a record deleted in between (the sweeper)
   * sends the claim round again.
   */
  const claim = (record: IdempotencyRecord, now: Timestamp): Effect.Effect<Option.Option<IdempotencyRecord>, StorageError> =>
    Effect.gen(function*() {
      const row = {
        account_id: record.account_id,
        key: record.key,
        fingerprint: record.fingerprint,
        request_id: record.request_id,
        response_status: null,
        response_headers: null,
        response_body: null,
        created_at: record.created_at,
        expires_at: record.expires_at,
        locked_until: record.locked_until
      }
      for (let round = 0; round < 3; round++) {
        const inserted = yield* conn.affected((db) =>
          db.insertInto("idempotency_keys").values(row).onConflict((oc) => oc.columns(["account_id", "key"]).doNothing())
        )
        if (inserted > 0) return Option.none()
        const taken = yield* conn.affected((db) =>
          db.updateTable("idempotency_keys").set(row)
            .where("account_id", "=", record.account_id).where("key", "=", record.key)
            .where((eb) =>
              eb.or([
                eb("expires_at", "<=", now),
                eb.and([eb("response_status", "is", null), eb("locked_until", "<=", now)])
              ])
            )
        )
        if (taken > 0) return Option.none()
        const held = yield* conn.first((db) =>
          db.selectFrom("idempotency_keys").selectAll().where("account_id", "=", record.account_id).where("key", "=", record.key)
        )
        if (Option.isSome(held)) return Option.some(toRecord(held.value))
      }
      return yield* Effect.dieMessage("idempotency key claim: the key kept vanishing between statements")
    })

  return IdempotencyRepo.of({
    claim,
    settle: (accountId, key, requestId, response) =>
      Effect.map(
        conn.affected((db) =>
          db.updateTable("idempotency_keys")
            .set({ response_status: response.status, response_headers: JSON.stringify(response.headers), response_body: response.body, locked_until: null })
            .where("account_id", "=", accountId).where("key", "=", key).where("request_id", "=", requestId).where("response_status", "is", null)
        ),
        (count) => count > 0
      ),
    release: (accountId, key, requestId) =>
      Effect.map(
        conn.affected((db) =>
          db.deleteFrom("idempotency_keys")
            .where("account_id", "=", accountId).where("key", "=", key).where("request_id", "=", requestId).where("response_status", "is", null)
        ),
        (count) => count > 0
      ),
    deleteExpired: (now) => conn.affected((db) => db.deleteFrom("idempotency_keys").where("expires_at", "<=", now))
  })
}
