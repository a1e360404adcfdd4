import { type ProofRecord, ProofsRepo, type Timestamp } from "@mzk/core"
import { Effect, Option } from "effect"
import type { Insertable, Selectable, Updateable } from "kysely"
import type { Executor, SqlConnection } from "../connection.js"
import type { ProofsTable } from "../schema.js"
import { pickCapped } from "./capped.js"
import { page } from "./paging.js"

const json = (value: unknown) => (value === null ? null : JSON.stringify(value))
const parsed = (text: string | null) => (text === null ? null : JSON.parse(text))

const toRecord = (row: Selectable<ProofsTable>): ProofRecord =>
  ({ ...row, inputs: parsed(row.inputs), public_inputs: JSON.parse(row.public_inputs), error: parsed(row.error) }) as ProofRecord

const toRow = (record: ProofRecord): Insertable<ProofsTable> => ({
  ...record,
  inputs: json(record.inputs),
  public_inputs: JSON.stringify(record.public_inputs),
  error: json(record.error)
})

const byExpiry = (a: ProofRecord, b: ProofRecord) =>
  (a.expires_at ?? "") < (b.expires_at ?? "") ? -1 : (a.expires_at ?? "") > (b.expires_at ?? "") ? 1 : a.id < b.id ? -1 : 1

/** How many candidates a claim looks at per proof it may take, to pass over accounts at their cap. */
const SCAN_FACTOR = 10

/** Every column of `proofs`, for the statement that inserts one whole row. */
const PROOF_COLUMNS = [
  "id", "account_id", "batch_id", "type", "circuit", "status", "inputs", "public_inputs", "proof_blob", "error",
  "duration_ms", "attempts", "lease_expires_at", "created_at", "started_at", "completed_at", "expires_at"
] as const satisfies ReadonlyArray<keyof ProofsTable>
// Fails to compile when the table gains a column the list lacks.
const _everyColumn: Exclude<keyof ProofsTable, (typeof PROOF_COLUMNS)[number]> extends never ? true : never = true

export const sqlProofs = (conn: SqlConnection) => {
  const postgres = conn.dialect === "postgres"
  // One proof per request is the common case; a batch inserts its rows in one built statement.
  const insertOne = conn.statement((db, $: Insertable<ProofsTable>) =>
    db.insertInto("proofs").values(Object.fromEntries(PROOF_COLUMNS.map((column) => [column, $[column]])) as Insertable<ProofsTable>)
  )

  const settle = (id: string, attempt: number, set: Updateable<ProofsTable>) =>
    conn.first((db) =>
      db.updateTable("proofs").set(set).where("id", "=", id).where("status", "=", "running").where("attempts", "=", attempt)
        .returningAll()
    ).pipe(Effect.map(Option.map(toRecord)))

  return ProofsRepo.of({
    insertMany: (records) =>
      records.length === 0
        ? Effect.void
        : (records.length === 1
          ? insertOne.execute(toRow(records[0]!))
          : conn.execute((db) => db.insertInto("proofs").values(records.map(toRow)))
        ).pipe(Effect.zipRight(conn.announce("proofs"))),
    get: (accountId, id) =>
      conn.first((db) => db.selectFrom("proofs").selectAll().where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, query) =>
      page(conn, query, (db) =>
        db.selectFrom("proofs").where("account_id", "=", accountId)
          .$if(query.status !== undefined, (q) => q.where("status", "=", query.status!)), toRecord),
    /**
     * Claims serialise per account: the accounts of the first candidates are locked (in id order,
     * so two claims never wait on each other in a cycle), then their claimable proofs are read
     * again and the running count is taken under that lock, so the per-account limit holds across
     * processes. Claims for other accounts go on in parallel. SQLite's single writer does the same.
     */
    claimNext: ({ leaseUntil, limit, maxRunningPerAccount, now }) =>
      conn.transaction(Effect.gen(function*() {
        const claimable = (db: Executor) =>
          db.selectFrom("proofs").select(["id", "account_id"])
            .where((eb) => eb.or([
              eb("status", "=", "queued"),
              eb.and([eb("status", "=", "running"), eb("lease_expires_at", "<=", now)])
            ]))
            .orderBy("id").limit(limit * SCAN_FACTOR)
        const peek = yield* conn.rows(claimable)
        if (peek.length === 0) return []
        const accounts = [...new Set(peek.map((c) => c.account_id))].sort()
        if (postgres) {
          yield* conn.execute((db) => db.selectFrom("accounts").select("id").where("id", "in", accounts).orderBy("id").forUpdate())
        }
        const candidates = postgres
          ? yield* conn.rows((db) => claimable(db).where("account_id", "in", accounts))
          : peek
        const counts = yield* conn.rows((db) =>
          db.selectFrom("proofs").select(["account_id", (eb) => eb.fn.countAll<number | string>().as("running")])
            .where("account_id", "in", accounts).where("status", "=", "running").where("lease_expires_at", ">", now)
            .groupBy("account_id")
        )
        const picked = pickCapped(candidates, {
          limit,
          cap: maxRunningPerAccount,
          group: (candidate) => candidate.account_id,
          held: new Map(counts.map((c) => [c.account_id, Number(c.running)]))
        })
        if (picked.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("proofs")
            .set((eb) => ({ status: "running", started_at: now, lease_expires_at: leaseUntil, attempts: eb("attempts", "+", 1) }))
            .where("id", "in", picked)
            // A second guard besides the account lock: only rows that are still claimable.
            .where((eb) => eb.or([
              eb("status", "=", "queued"),
              eb.and([eb("status", "=", "running"), eb("lease_expires_at", "<=", now)])
            ]))
            .returningAll()
        )
        return rows.map(toRecord).sort((a, b) => (a.id < b.id ? -1 : 1))
      })),
    complete: (id, attempt, completion) =>
      settle(id, attempt, {
        status: "completed",
        proof_blob: completion.proof_blob,
        public_inputs: JSON.stringify(completion.public_inputs),
        duration_ms: completion.duration_ms,
        completed_at: completion.completed_at,
        expires_at: completion.expires_at,
        inputs: null,
        error: null,
        lease_expires_at: null
      }),
    fail: (id, attempt, failure) =>
      settle(id, attempt, {
        status: "failed",
        error: JSON.stringify(failure.error),
        duration_ms: failure.duration_ms,
        completed_at: failure.completed_at,
        expires_at: failure.expires_at,
        inputs: null,
        proof_blob: null,
        lease_expires_at: null
      }),
    release: (id, attempt) =>
      conn.affected((db) =>
        db.updateTable("proofs").set((eb) => ({ status: "queued", lease_expires_at: null, started_at: null, attempts: eb("attempts", "-", 1) }))
          .where("id", "=", id).where("status", "=", "running").where("attempts", "=", attempt)
      ).pipe(
        Effect.map((count) => count > 0),
        Effect.tap((released) => (released ? conn.announce("proofs") : Effect.void))
      ),
    expireDue: (now: Timestamp, limit: number) =>
      conn.transaction(Effect.gen(function*() {
        const due = yield* conn.rows((db) =>
          db.selectFrom("proofs").select("id").where("status", "in", ["completed", "failed"]).where("expires_at", "<=", now)
            .orderBy("expires_at").orderBy("id").limit(limit)
            .$if(postgres, (q) => q.forUpdate().skipLocked())
        )
        if (due.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("proofs").set({ status: "expired", proof_blob: null, inputs: null })
            .where("id", "in", due.map((d) => d.id)).where("status", "in", ["completed", "failed"])
            .returningAll()
        )
        return rows.map(toRecord).sort(byExpiry)
      }))
  })
}
