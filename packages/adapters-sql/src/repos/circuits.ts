import {
  circuitDigests,
  type CircuitId,
  type CircuitInsertRefusal,
  CircuitsRepo,
  type CircuitVersionPick,
  type Digest,
  type ProvingSystem,
  type StoredCircuit,
  type Timestamp
} from "@mzk/core"
import { Effect, Either, Option } from "effect"
import type { ExpressionBuilder, Insertable, Selectable, Updateable } from "kysely"
import type { Executor, SqlConnection } from "../connection.js"
import type { CircuitsTable, Database } from "../schema.js"
import { page } from "./paging.js"

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value))
const parsed = (text: string | null) => (text === null ? null : JSON.parse(text))

const toStored = (row: Selectable<CircuitsTable>): StoredCircuit =>
  ({
    id: row.id,
    name: row.name,
    version: row.version,
    owner: row.account_id,
    status: row.status,
    error: parsed(row.error),
    description: row.description,
    constraints: row.constraints,
    inputs: JSON.parse(row.inputs),
    public_signals: JSON.parse(row.public_signals),
    verification_key: parsed(row.verification_key),
    development_only: row.development_only === 1,
    proving_system: row.proving_system as ProvingSystem,
    // An account's circuit is set up for one system.
    proving_systems: [row.proving_system as ProvingSystem],
    field_modulus: row.field_modulus,
    artifacts: parsed(row.artifacts),
    created_at: row.created_at,
    updated_at: row.updated_at,
    source: JSON.parse(row.source),
    lease_expires_at: row.lease_expires_at,
    attempts: row.attempts,
    metadata: JSON.parse(row.metadata)
  }) as unknown as StoredCircuit

const toRow = (circuit: StoredCircuit): Insertable<CircuitsTable> => ({
  id: circuit.id,
  account_id: circuit.owner,
  name: circuit.name,
  version: circuit.version,
  status: circuit.status,
  error: json(circuit.error),
  description: circuit.description,
  constraints: circuit.constraints,
  inputs: JSON.stringify(circuit.inputs),
  public_signals: JSON.stringify(circuit.public_signals),
  verification_key: json(circuit.verification_key),
  development_only: circuit.development_only ? 1 : 0,
  proving_system: circuit.proving_system,
  field_modulus: circuit.field_modulus,
  artifacts: json(circuit.artifacts),
  source: JSON.stringify(circuit.source),
  lease_expires_at: circuit.lease_expires_at,
  attempts: circuit.attempts,
  created_at: circuit.created_at,
  updated_at: circuit.updated_at,
  metadata: JSON.stringify(circuit.metadata),
  removed_at: null
})

/** A live circuit that is compiling and held by no claim at `now`. */
const claimable = (now: Timestamp) => (eb: ExpressionBuilder<Database, "circuits">) =>
  eb.and([
    eb("status", "=", "compiling"),
    eb("removed_at", "is", null),
    eb.or([eb("lease_expires_at", "is", null), eb("lease_expires_at", "<=", now)])
  ])

/** The live versions of an account's name. */
const liveVersions = (db: Executor, owner: string, name: string) =>
  db.selectFrom("circuits").where("account_id", "=", owner).where("name", "=", name).where("removed_at", "is", null)

export const sqlCircuits = (conn: SqlConnection) => {
  const { dialect } = conn

  const refer = (circuitId: string, digests: ReadonlyArray<Digest>) =>
    digests.length === 0
      ? Effect.void
      : Effect.asVoid(conn.execute((db) =>
        db.insertInto("circuit_artifacts").values(digests.map((digest) => ({ circuit_id: circuitId, digest })))
          .onConflict((oc) => oc.columns(["circuit_id", "digest"]).doNothing())
      ))

  /** A write on a claimed build: only while it is live, compiling and claimed with this `attempt`. */
  const settle = (id: string, attempt: number, set: Updateable<CircuitsTable>) =>
    conn.first((db) =>
      db.updateTable("circuits").set(set)
        .where("id", "=", id).where("status", "=", "compiling").where("removed_at", "is", null).where("attempts", "=", attempt)
        .returningAll()
    ).pipe(Effect.map(Option.map(toStored)))

  /**
   * Deletes the artifacts among `digests` that no live circuit refers to. They are held first, so
   * an upload putting the same bytes now either commits its circuit before the check below sees
   * it, or waits for the deletion and writes the bytes again (see `ArtifactsRepo.put`).
   */
  const deleteUnreferenced = (digests: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      if (digests.length === 0) return
      yield* conn.execute((db) => db.selectFrom("artifacts").select("digest").where("digest", "in", digests).orderBy("digest").$call(dialect.lockRows))
      const shared = yield* conn.rows((db) =>
        db.selectFrom("circuit_artifacts").innerJoin("circuits", "circuits.id", "circuit_artifacts.circuit_id")
          .select("circuit_artifacts.digest").distinct()
          .where("circuit_artifacts.digest", "in", digests).where("circuits.removed_at", "is", null)
      )
      const kept = new Set(shared.map((row) => row.digest))
      const orphans = digests.filter((digest) => !kept.has(digest))
      if (orphans.length === 0) return
      yield* conn.execute((db) => db.deleteFrom("artifact_chunks").where("digest", "in", orphans))
      yield* conn.execute((db) => db.deleteFrom("artifacts").where("digest", "in", orphans))
    })

  /** Hides a live circuit (its row stays, for its proofs) and frees its name. */
  const hide = (id: string, now: Timestamp) =>
    conn.execute((db) => db.updateTable("circuits").set({ removed_at: now, lease_expires_at: null }).where("id", "=", id))

  /**
   * A hidden circuit keeps no artifact: its proofs verify with the key kept in its row. Deletes its
   * references, then the artifacts nothing live refers to any more.
   */
  const release = (id: string) =>
    Effect.gen(function*() {
      const referred = yield* conn.rows((db) => db.selectFrom("circuit_artifacts").select("digest").where("circuit_id", "=", id))
      yield* conn.execute((db) => db.deleteFrom("circuit_artifacts").where("circuit_id", "=", id))
      yield* deleteUnreferenced(referred.map((row) => row.digest).sort())
    })

  return CircuitsRepo.of({
    /** Holding the account serialises its inserts, so the name and both limits are checked with nothing in between. */
    insert: (circuit, { maxCircuits, maxCompiling }) =>
      conn.transaction(Effect.gen(function*() {
        yield* dialect.lockAccounts(conn, [circuit.owner])
        const live = yield* conn.rows((db) =>
          db.selectFrom("circuits").select(["id", "name", "version", "status"]).where("account_id", "=", circuit.owner)
            .where("removed_at", "is", null)
        )
        // The newest live version; a failed one gives its place to the upload that corrects it.
        const newest = live.filter((c) => c.name === circuit.name).reduce<(typeof live)[number] | undefined>(
          (found, c) => (found === undefined || c.version > found.version ? c : found),
          undefined
        )
        const replaced = newest?.status === "failed" ? newest.id : null
        const staying = live.filter((c) => c.id !== replaced)
        const refusal: CircuitInsertRefusal | undefined = staying.length >= maxCircuits
          ? "circuit_limit"
          : staying.filter((c) => c.status === "compiling").length >= maxCompiling
          ? "compilation_limit"
          : undefined
        if (refusal !== undefined) return Either.left(refusal)
        // Every version the name ever had counts, removed ones too: proofs name them. The account
        // is held, so no other insert numbers in between (the unique index is the backstop).
        const [highest] = yield* conn.rows((db) =>
          db.selectFrom("circuits").select((eb) => eb.fn.max("version").as("version"))
            .where("account_id", "=", circuit.owner).where("name", "=", circuit.name)
        )
        const version = Number(highest?.version ?? 0) + 1
        // Its artifacts released last, once the new circuit refers to those it shares with the
        // failed one (a corrected upload shares most of its files).
        if (replaced !== null) yield* hide(replaced, circuit.created_at)
        yield* conn.execute((db) => db.insertInto("circuits").values(toRow({ ...circuit, version })))
        yield* refer(circuit.id, circuitDigests(circuit))
        if (replaced !== null) yield* release(replaced)
        if (circuit.status === "compiling") yield* dialect.announce(conn, "circuits")
        return Either.right({ version, replaced: replaced as CircuitId | null })
      })),
    getByName: (owner, name, pick: CircuitVersionPick = "newest") =>
      conn.first((db) =>
        liveVersions(db, owner, name)
          .$if(typeof pick === "number", (q) => q.where("version", "=", pick as number))
          .$if(pick === "newest_ready", (q) => q.where("status", "=", "ready"))
          .selectAll().orderBy("version", "desc").limit(1)
      ).pipe(Effect.map(Option.map(toStored))),
    getById: (id) => conn.first((db) => db.selectFrom("circuits").selectAll().where("id", "=", id)).pipe(Effect.map(Option.map(toStored))),
    holdLive: (ids) =>
      ids.length === 0
        ? Effect.succeed([])
        : Effect.map(
          conn.rows((db) =>
            db.selectFrom("circuits").select("id").where("id", "in", ids).where("removed_at", "is", null).orderBy("id").$call(dialect.shareRows)
          ),
          (rows) => {
            const live = new Set(rows.map((row) => row.id))
            return ids.filter((id) => !live.has(id))
          }
        ),
    list: (owner, request) =>
      page(conn, request, (db) =>
        db.selectFrom("circuits").where("account_id", "=", owner).where("removed_at", "is", null)
          // Each name's newest live version only: no live version of the name above it.
          .where(({ exists, not, selectFrom }) =>
            not(exists(
              selectFrom("circuits as newer").select("newer.id")
                .whereRef("newer.account_id", "=", "circuits.account_id").whereRef("newer.name", "=", "circuits.name")
                .whereRef("newer.version", ">", "circuits.version").where("newer.removed_at", "is", null)
            ))
          ), toStored),
    listVersions: (owner, name, request) =>
      Effect.gen(function*() {
        // Highest version first; a cursor (a circuit id) stands for its version.
        const backwards = request.endingBefore !== undefined
        const cursor = request.startingAfter ?? request.endingBefore
        const rows = yield* conn.rows((db) =>
          liveVersions(db, owner, name).selectAll()
            .$if(cursor !== undefined, (q) =>
              q.where(
                "version",
                backwards ? ">" : "<",
                (eb) => eb.selectFrom("circuits as at").select("at.version").where("at.id", "=", cursor!)
                  .where("at.account_id", "=", owner).where("at.name", "=", name)
              ))
            .orderBy("version", backwards ? "asc" : "desc").limit(request.limit + 1)
        )
        const [counted] = yield* conn.rows((db) => liveVersions(db, owner, name).select((eb) => eb.fn.countAll<number | string>().as("total")))
        const kept = rows.slice(0, request.limit)
        if (backwards) kept.reverse()
        return { items: kept.map(toStored), total: Number(counted?.total ?? 0), has_more: rows.length > request.limit }
      }),
    remove: (owner, name, which, now) =>
      conn.transaction(Effect.gen(function*() {
        // Held until the removal commits: a build settling or a second removal waits for it.
        const found = yield* conn.rows((db) =>
          liveVersions(db, owner, name).select(["id", "version"])
            .$if(which !== "all", (q) => q.where("version", "=", which as number))
            .orderBy("id").$call(dialect.lockRows)
        )
        if (found.length === 0) return "not_found" as const
        const ids = found.map((row) => row.id)
        const busy = yield* conn.first((db) =>
          db.selectFrom("proofs").select("id").where("circuit_id", "in", ids).where("status", "in", ["queued", "running"]).limit(1)
        )
        if (Option.isSome(busy)) return "in_use" as const
        for (const id of ids) yield* hide(id, now)
        for (const id of ids) yield* release(id)
        return { removed: found.map((row) => ({ id: row.id as CircuitId, version: row.version })) }
      })),
    claimBuilds: ({ leaseUntil, limit, now, only }) =>
      limit <= 0 || only?.length === 0
        ? Effect.succeed([])
        : conn.transaction(Effect.gen(function*() {
          const picked = yield* conn.rows((db) =>
            db.selectFrom("circuits").select("id").where(claimable(now))
              .$if(only !== undefined, (query) => query.where("id", "in", only!))
              .orderBy("id").limit(limit).$call(dialect.takeRows)
          )
          if (picked.length === 0) return []
          const rows = yield* conn.rows((db) =>
            db.updateTable("circuits")
              .set((eb) => ({ lease_expires_at: leaseUntil, attempts: eb("attempts", "+", 1) }))
              .where("id", "in", picked.map((row) => row.id))
              // A second guard besides the pick: only rows that are still claimable.
              .where(claimable(now))
              .returningAll()
          )
          return rows.map(toStored).sort((a, b) => (a.id < b.id ? -1 : 1))
        })),
    complete: (id, attempt, build) =>
      conn.transaction(Effect.gen(function*() {
        const settled = yield* settle(id, attempt, {
          status: "ready",
          error: null,
          artifacts: JSON.stringify(build.artifacts),
          constraints: build.constraints,
          inputs: JSON.stringify(build.inputs),
          public_signals: JSON.stringify(build.public_signals),
          verification_key: json(build.verification_key),
          development_only: build.development_only ? 1 : 0,
          proving_system: build.proving_system,
          updated_at: build.updated_at,
          lease_expires_at: null
        })
        if (Option.isSome(settled)) yield* refer(id, circuitDigests(settled.value))
        return settled
      })),
    release: (id, attempt) =>
      settle(id, attempt, { lease_expires_at: null, attempts: attempt - 1 }).pipe(
        Effect.map(Option.isSome),
        Effect.tap((released) => (released ? dialect.announce(conn, "circuits") : Effect.void))
      ),
    fail: (id, attempt, error, now) =>
      settle(id, attempt, { status: "failed", error: JSON.stringify(error), updated_at: now, lease_expires_at: null })
  })
}
