import {
  circuitDigests,
  type CircuitInsertRefusal,
  CircuitsRepo,
  type ProofRecord,
  type StoredCircuit,
  type Timestamp
} from "@mzk/core"
import { Effect, Either, Option } from "effect"
import { ARTIFACTS_TABLE, type MemoryArtifact } from "./artifacts.js"
import { byId, type MemoryDb, paginate } from "./db.js"

/** A stored circuit and when it was removed: removed rows stay, hidden, for the proofs made with them. */
interface Row {
  readonly circuit: StoredCircuit
  readonly removed_at: Timestamp | null
}

export const memoryCircuits = (db: MemoryDb) => {
  const rows = db.table<Row>("circuits")
  const proofs = db.table<ProofRecord>("proofs")
  const artifacts = db.table<MemoryArtifact>(ARTIFACTS_TABLE)

  const live = () => [...rows.values()].filter((row) => row.removed_at === null).map((row) => row.circuit)
  const liveOf = (owner: string) => live().filter((c) => c.owner === owner)

  /** Hides a live circuit (its row stays, for its proofs) and deletes the artifacts no live circuit refers to any more. */
  const hide = (circuit: StoredCircuit, now: Timestamp) => {
    rows.set(circuit.id, { circuit, removed_at: now })
    const kept = new Set(live().flatMap(circuitDigests))
    for (const digest of circuitDigests(circuit)) if (!kept.has(digest)) artifacts.delete(digest)
  }

  /** The conditional write behind complete, fail and release: only a live build under the current claim. */
  const settle = (id: string, attempt: number, change: (circuit: StoredCircuit) => StoredCircuit) =>
    db.write(Effect.gen(function*() {
      const row = rows.get(id)
      yield* Effect.yieldNow()
      if (row === undefined || row.removed_at !== null || row.circuit.status !== "compiling" || row.circuit.attempts !== attempt) {
        return Option.none<StoredCircuit>()
      }
      const updated = change(row.circuit)
      rows.set(id, { ...row, circuit: updated })
      return Option.some(updated)
    }))

  return CircuitsRepo.of({
    insert: (circuit, { maxCircuits, maxCompiling }) =>
      db.write(Effect.gen(function*() {
        const own = liveOf(circuit.owner)
        // Yield between the check and the write: without the lock, the race tests must fail.
        yield* Effect.yieldNow()
        const named = own.find((c) => c.name === circuit.name)
        // A failed circuit gives its name and its place to the upload that replaces it.
        const replaced = named?.status === "failed" ? named : undefined
        const staying = own.filter((c) => c !== replaced)
        const refusal: CircuitInsertRefusal | undefined = named !== undefined && replaced === undefined
          ? "name_taken"
          : staying.length >= maxCircuits
          ? "circuit_limit"
          : staying.filter((c) => c.status === "compiling").length >= maxCompiling
          ? "compilation_limit"
          : undefined
        if (refusal !== undefined) return Either.left(refusal)
        rows.set(circuit.id, { circuit, removed_at: null })
        if (replaced !== undefined) hide(replaced, circuit.created_at)
        return Either.right({ replaced: replaced?.id ?? null })
      })),
    getByName: (owner, name) => Effect.sync(() => Option.fromNullable(liveOf(owner).find((c) => c.name === name))),
    getById: (id) => Effect.sync(() => Option.fromNullable(rows.get(id)?.circuit)),
    // One writer at a time: inside a transaction nothing can remove the circuits in between.
    holdLive: (ids) => Effect.sync(() => ids.filter((id) => rows.get(id)?.removed_at !== null)),
    list: (owner, page) => Effect.sync(() => paginate(liveOf(owner), page)),
    remove: (owner, name, now) =>
      db.write(Effect.gen(function*() {
        const circuit = liveOf(owner).find((c) => c.name === name)
        yield* Effect.yieldNow()
        if (circuit === undefined) return "not_found" as const
        const busy = [...proofs.values()].some((p) => p.circuit_id === circuit.id && (p.status === "queued" || p.status === "running"))
        if (busy) return "in_use" as const
        hide(circuit, now)
        return { removed: circuit.id }
      })),
    claimBuilds: ({ leaseUntil, limit, now, only }) =>
      db.write(Effect.gen(function*() {
        const candidates = live()
          .filter((c) => c.status === "compiling" && (c.lease_expires_at === null || c.lease_expires_at <= now))
          .filter((c) => only === undefined || only.includes(c.id))
          .sort(byId)
          .slice(0, Math.max(0, limit))
        yield* Effect.yieldNow()
        return candidates.map((c) => {
          const claimed: StoredCircuit = { ...c, lease_expires_at: leaseUntil, attempts: c.attempts + 1 }
          rows.set(c.id, { circuit: claimed, removed_at: null })
          return claimed
        })
      })),
    complete: (id, attempt, build) =>
      settle(id, attempt, (c) => ({
        ...c,
        status: "ready",
        error: null,
        artifacts: build.artifacts,
        constraints: build.constraints,
        inputs: build.inputs,
        public_signals: build.public_signals,
        verification_key: build.verification_key,
        development_only: build.development_only,
        updated_at: build.updated_at,
        lease_expires_at: null
      })),
    release: (id, attempt) =>
      Effect.map(settle(id, attempt, (c) => ({ ...c, lease_expires_at: null, attempts: c.attempts - 1 })), Option.isSome),
    fail: (id, attempt, error, now) =>
      settle(id, attempt, (c) => ({ ...c, status: "failed", error, updated_at: now, lease_expires_at: null }))
  })
}
