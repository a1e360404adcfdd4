import {
  type CircuitUsage,
  claimHolds,
  PROOF_TRANSITIONS,
  type ProofId,
  priorityOfRank,
  priorityRank,
  type ProofRecord,
  ProofsRepo,
  type ProofStatus,
  type Timestamp
} from "@mzk/core"
import { Effect, Option } from "effect"
import type { Insertable, Kysely, Selectable, Updateable } from "kysely"
import { claimableProof } from "../claims.js"
import type { SqlConnection } from "../connection.js"
import type { Database, ProofsTable } from "../schema.js"
import { page } from "./paging.js"

const json = (value: unknown) => (value === null ? null : JSON.stringify(value))
const parsed = (text: string | null) => (text === null ? null : JSON.parse(text))

// `proof_digest` is storage's index of the proof, not part of the record.
const toRecord = ({ priority_rank, proof_digest: _, ...row }: Selectable<ProofsTable>): ProofRecord =>
  ({
    ...row,
    priority: priorityOfRank(priority_rank),
    inputs: parsed(row.inputs),
    public_inputs: JSON.parse(row.public_inputs),
    error: parsed(row.error),
    metadata: JSON.parse(row.metadata)
  }) as ProofRecord

const toRow = ({ priority, ...record }: ProofRecord): Insertable<ProofsTable> => ({
  ...record,
  priority_rank: priorityRank(priority),
  inputs: json(record.inputs),
  public_inputs: JSON.stringify(record.public_inputs),
  error: json(record.error),
  proof_digest: null,
  metadata: JSON.stringify(record.metadata)
})

const byExpiry = (a: ProofRecord, b: ProofRecord) =>
  (a.expires_at ?? "") < (b.expires_at ?? "") ? -1 : (a.expires_at ?? "") > (b.expires_at ?? "") ? 1 : a.id < b.id ? -1 : 1

/** Every column of `proofs`, for the statement that inserts one whole row. */
const PROOF_COLUMNS = [
  "id", "account_id", "batch_id", "type", "circuit", "circuit_id", "circuit_version", "proving_system", "status", "inputs", "public_inputs", "proof_blob", "error",
  "duration_ms", "attempts", "lease_expires_at", "created_at", "started_at", "completed_at", "finished_at", "canceled_at", "expires_at",
  "proving_ms", "priority_rank", "deadline_at",
  "proof_digest",
  "metadata"
] as const satisfies ReadonlyArray<keyof ProofsTable>
// Fails to compile when the table gains a column the list lacks.
const _everyColumn: Exclude<keyof ProofsTable, (typeof PROOF_COLUMNS)[number]> extends never ? true : never = true

export const sqlProofs = (conn: SqlConnection) => {
  const { dialect } = conn
  // One proof per request is the common case; a batch inserts its rows in one built statement.
  const insertOne = conn.statement((db, $: Insertable<ProofsTable>) =>
    db.insertInto("proofs").values(Object.fromEntries(PROOF_COLUMNS.map((column) => [column, $[column]])) as Insertable<ProofsTable>)
  )

  // A correlated count per proof on (status, account_id, priority_rank, id): the proofs ahead of
  // it in claim order, itself included. A queue position is read on every create and get of a
  // queued proof, so it reads only the index range before the proof, not the account's queue.
  // `one` may be a statement's placeholder, which only `=` takes.
  const positions = (db: Kysely<Database>, accountId: string, ids: { readonly one: string } | { readonly many: ReadonlyArray<string> }) =>
    db.selectFrom("proofs as p").where("p.account_id", "=", accountId)
      .where((eb) => ("one" in ids ? eb("p.id", "=", ids.one) : eb("p.id", "in", ids.many)))
      .where("p.status", "=", PROOF_TRANSITIONS.claim.from[0])
      .select((eb) => [
        "p.id",
        eb.selectFrom("proofs as q").select((qb) => qb.fn.countAll<number | string | bigint>().as("n"))
          .where("q.status", "=", PROOF_TRANSITIONS.claim.from[0]).where("q.account_id", "=", accountId)
          .where((qb) =>
            qb.or([
              qb("q.priority_rank", "<", qb.ref("p.priority_rank")),
              qb.and([qb("q.priority_rank", "=", qb.ref("p.priority_rank")), qb("q.id", "<=", qb.ref("p.id"))])
            ])
          )
          .as("position")
      ])
  const onePosition = conn.statement((db, $: { accountId: string; id: string }) => positions(db, $.accountId, { one: $.id }))

  /** A transition of the lifecycle table on one claimed proof: only from its `from` statuses, only by the current claim. */
  const settle = (transition: "complete" | "fail", id: string, attempt: number, set: Updateable<ProofsTable>) =>
    conn.first((db) =>
      db.updateTable("proofs").set({ ...set, status: PROOF_TRANSITIONS[transition].to })
        .where("id", "=", id).where("status", "in", PROOF_TRANSITIONS[transition].from).where("attempts", "=", attempt)
        .returningAll()
    ).pipe(Effect.map(Option.map(toRecord)))

  return ProofsRepo.of({
    insertMany: (records) =>
      records.length === 0
        ? Effect.void
        : (records.length === 1
          ? insertOne.execute(toRow(records[0]!))
          : conn.execute((db) => db.insertInto("proofs").values(records.map(toRow)))
        ).pipe(Effect.zipRight(dialect.announce(conn, "proofs"))),
    findByDigest: (accountId, digest) =>
      conn.first((db) =>
        db.selectFrom("proofs").selectAll().where("account_id", "=", accountId).where("proof_digest", "=", digest)
          .where("status", "=", "completed").orderBy("id").limit(1)
      ).pipe(Effect.map(Option.map(toRecord))),
    get: (accountId, id) =>
      conn.first((db) => db.selectFrom("proofs").selectAll().where("id", "=", id).where("account_id", "=", accountId))
        .pipe(Effect.map(Option.map(toRecord))),
    list: (accountId, query) =>
      page(conn, query, (db) =>
        db.selectFrom("proofs").where("account_id", "=", accountId)
          .$if(query.status !== undefined, (q) => q.where("status", "=", query.status!))
          .$if(query.metadata !== undefined, (q) => q.where(dialect.metadata.matches(query.metadata!))), toRecord),
    /**
     * The dialect picks the proofs, the per-account limit counted under whatever keeps concurrent
     * claims apart (account locks, or one writer at a time); they are marked running here.
     */
    claimNext: (claim) =>
      conn.transaction(Effect.gen(function*() {
        const picked = yield* dialect.pickProofs(conn, claim)
        if (picked.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("proofs")
            .set((eb) => ({ status: PROOF_TRANSITIONS.claim.to, started_at: claim.now, lease_expires_at: claim.leaseUntil, attempts: eb("attempts", "+", 1) }))
            .where("id", "in", picked)
            // A second guard besides the pick: only rows that are still claimable.
            .where(claimableProof(claim.now))
            .returningAll()
        )
        return rows.map(toRecord).sort((a, b) => (a.id < b.id ? -1 : 1))
      })),
    complete: (id, attempt, completion) =>
      settle("complete", id, attempt, {
        proof_blob: completion.proof_blob,
        proof_digest: completion.proof_digest ?? null,
        public_inputs: JSON.stringify(completion.public_inputs),
        duration_ms: completion.duration_ms,
        proving_ms: completion.proving_ms ?? null,
        completed_at: completion.completed_at,
        finished_at: completion.completed_at,
        expires_at: completion.expires_at,
        inputs: null,
        error: null,
        lease_expires_at: null
      }),
    fail: (id, attempt, failure) =>
      settle("fail", id, attempt, {
        error: JSON.stringify(failure.error),
        duration_ms: failure.duration_ms,
        proving_ms: failure.proving_ms ?? null,
        finished_at: failure.finished_at,
        ...(failure.started_at === null ? { started_at: null } : {}),
        expires_at: failure.expires_at,
        inputs: null,
        proof_blob: null,
        lease_expires_at: null
      }),
    release: (id, attempt) =>
      conn.affected((db) =>
        db.updateTable("proofs")
          .set((eb) => ({ status: PROOF_TRANSITIONS.release.to, lease_expires_at: null, started_at: null, attempts: eb("attempts", "-", 1) }))
          .where("id", "=", id).where("status", "in", PROOF_TRANSITIONS.release.from).where("attempts", "=", attempt)
      ).pipe(
        Effect.map((count) => count > 0),
        Effect.tap((released) => (released ? dialect.announce(conn, "proofs") : Effect.void))
      ),
    cancel: (accountId, target, cancellation) =>
      conn.rows((db) =>
        db.updateTable("proofs")
          .set({ status: PROOF_TRANSITIONS.cancel.to, ...cancellation, finished_at: cancellation.canceled_at, inputs: null, lease_expires_at: null })
          .where("account_id", "=", accountId)
          .$if("proof" in target, (q) => q.where("id", "=", (target as { proof: string }).proof))
          .$if("batch" in target, (q) => q.where("batch_id", "=", (target as { batch: string }).batch))
          .where("status", "in", PROOF_TRANSITIONS.cancel.from)
          .returningAll()
      ).pipe(
        Effect.map((rows) => rows.map(toRecord).sort((a, b) => (a.id < b.id ? -1 : 1))),
        // A running proof's worker may be another process: tell it (at commit) to check its claims.
        Effect.tap((rows) => (rows.some((row) => row.started_at !== null) ? dialect.announce(conn, "canceledProofs") : Effect.void))
      ),
    listBatch: (accountId, batchId) =>
      Effect.map(
        conn.rows((db) => db.selectFrom("proofs").selectAll().where("batch_id", "=", batchId).where("account_id", "=", accountId).orderBy("id")),
        (rows) => rows.map(toRecord)
      ),
    lostClaims: (claims) =>
      claims.length === 0
        ? Effect.succeed([])
        : Effect.map(
          conn.rows((db) => db.selectFrom("proofs").select(["id", "status", "attempts"]).where("id", "in", claims.map((c) => c.id))),
          (rows) => {
            const found = new Map(rows.map((row) => [row.id, { status: row.status as ProofStatus, attempts: row.attempts }]))
            return claims.filter((claim) => {
              const row = found.get(claim.id)
              return row === undefined || !claimHolds(claim.attempts, row)
            }).map((claim) => claim.id)
          }
        ),
    expireDue: (now: Timestamp, limit: number) =>
      conn.transaction(Effect.gen(function*() {
        const due = yield* conn.rows((db) =>
          db.selectFrom("proofs").select("id").where("status", "in", PROOF_TRANSITIONS.expire.from).where("expires_at", "<=", now)
            .orderBy("expires_at").orderBy("id").limit(limit)
            .$call(dialect.takeRows)
        )
        if (due.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("proofs").set({ status: PROOF_TRANSITIONS.expire.to, proof_blob: null, proof_digest: null, inputs: null })
            .where("id", "in", due.map((d) => d.id)).where("status", "in", PROOF_TRANSITIONS.expire.from)
            .returningAll()
        )
        return rows.map(toRecord).sort(byExpiry)
      })),
    queuePositions: (accountId, ids) =>
      ids.length === 0
        ? Effect.succeed(new Map())
        : Effect.map(
          // Create and get ask for one proof: that count is a statement, compiled once.
          ids.length === 1
            ? onePosition.rows({ accountId, id: ids[0]! })
            : conn.rows((db) => positions(db, accountId, { many: [...ids] })),
          (rows) => new Map(rows.map((row) => [row.id as ProofId, Number(row.position)]))
        ),
    failOverdue: (now, limit, failure) =>
      conn.transaction(Effect.gen(function*() {
        const due = yield* conn.rows((db) =>
          db.selectFrom("proofs").select("id").where("status", "in", PROOF_TRANSITIONS.overdue.from).where("deadline_at", "<=", now)
            .orderBy("deadline_at").orderBy("id").limit(limit)
            .$call(dialect.takeRows)
        )
        if (due.length === 0) return []
        const rows = yield* conn.rows((db) =>
          db.updateTable("proofs").set({
            status: PROOF_TRANSITIONS.overdue.to,
            error: JSON.stringify(failure.error),
            duration_ms: failure.duration_ms,
            proving_ms: failure.proving_ms ?? null,
            finished_at: failure.finished_at,
            expires_at: failure.expires_at,
            inputs: null
          })
            .where("id", "in", due.map((d) => d.id)).where("status", "in", PROOF_TRANSITIONS.overdue.from)
            .returningAll()
        )
        return rows.map(toRecord).sort((a, b) => (a.id < b.id ? -1 : 1))
      })),
    usage: (accountId, { dayStart, monthStart }) =>
      Effect.map(
        Effect.all([
          conn.rows((db) =>
            db.selectFrom("proofs").select((eb) => ["status", eb.fn.countAll<number | string | bigint>().as("n")])
              .where("account_id", "=", accountId).where("created_at", ">=", dayStart).groupBy("status")
          ),
          // A proof counts where it settled (completed or failed, not canceled); expired ones keep
          // their finished_at and duration.
          conn.rows((db) =>
            db.selectFrom("proofs")
              .select((eb) => {
                const today = eb.case().when("finished_at", ">=", dayStart)
                return [
                  "circuit",
                  eb.fn.countAll<number | string | bigint>().as("proofs_month"),
                  eb.fn.coalesce(eb.fn.sum<number | string | bigint | null>("duration_ms"), eb.lit(0)).as("ms_month"),
                  eb.fn.sum<number | string | bigint>(today.then(1).else(0).end()).as("proofs_today"),
                  eb.fn.sum<number | string | bigint>(eb.case().when("finished_at", ">=", dayStart).then(eb.fn.coalesce("duration_ms", eb.lit(0))).else(0).end()).as("ms_today")
                ]
              })
              .where("account_id", "=", accountId).where("finished_at", ">=", monthStart).where("canceled_at", "is", null)
              .groupBy("circuit").orderBy("circuit")
          )
        ]),
        ([byStatus, byCircuit]) => ({
          createdTodayByStatus: Object.fromEntries(byStatus.map((row) => [row.status, Number(row.n)])) as Partial<Record<ProofStatus, number>>,
          circuits: byCircuit.map((row): CircuitUsage => ({
            circuit: row.circuit,
            proofs_today: Number(row.proofs_today),
            proving_ms_today: Number(row.ms_today),
            proofs_month: Number(row.proofs_month),
            proving_ms_month: Number(row.ms_month)
          }))
        })
      ),
    // Counted on the (status, id) index the claims use.
    queueDepth: Effect.map(
      conn.rows((db) =>
        db.selectFrom("proofs").select((eb) => ["status", eb.fn.countAll<number | string | bigint>().as("count")])
          .where("status", "in", ["queued", "running"]).groupBy("status")
      ),
      (rows) => {
        const count = (status: string) => Number(rows.find((row) => row.status === status)?.count ?? 0)
        return { queued: count("queued"), running: count("running") }
      }
    )
  })
}
