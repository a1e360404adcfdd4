import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import {
  type Proof,
  type ProofBatch,
  type ProofRecord,
  ProofStatus,
  type ProofVerification,
  toProof
} from "../domain/proof.js"
import {
  type ErrorDetail,
  InternalError,
  InvalidRequest,
  ProofNotFound,
  ProofNotReady,
  type RateLimitExceeded,
  type RateLimitWindow,
  type StorageError
} from "../errors.js"
import { type AccountId, type BatchId, idMaker, ProofId } from "../ids.js"
import { Limits } from "../limits.js"
import { decodeProofBlob } from "../proofs/blob.js"
import { validateProofRequest, type ValidatedProofRequest } from "../proofs/inputs.js"
import { ProofWakeup } from "../proofs/wakeup.js"
import { CircuitCatalog } from "../ports/circuitCatalog.js"
import { Entropy } from "../ports/entropy.js"
import { ProofsRepo } from "../ports/proofStorage.js"
import { Prover } from "../ports/prover.js"
import { Transactor } from "../ports/storage.js"
import type { Principal } from "../principal.js"
import { now } from "../time.js"
import { decodeInput } from "../validation.js"
import { Events } from "./events.js"
import { RateLimits } from "./rateLimits.js"

/** A metered operation's result with the rate-limit windows its response headers report. */
export interface Metered<A> {
  readonly value: A
  readonly rate_limits: ReadonlyArray<RateLimitWindow>
}

export interface ProofList {
  readonly proofs: ReadonlyArray<Proof>
  readonly total: number
  readonly has_more: boolean
}

export const ListProofsQuery = Schema.Struct({
  status: Schema.optionalWith(ProofStatus, { exact: true }),
  limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 100)), { exact: true }),
  starting_after: Schema.optionalWith(ProofId, { exact: true })
})
export type ListProofsQuery = typeof ListProofsQuery.Type

const decodeListQuery = decodeInput(ListProofsQuery)
const isProofId = Schema.is(ProofId)

const invalid = (details: ReadonlyArray<ErrorDetail>) =>
  new InvalidRequest({
    message: `Invalid request: ${details.map((d) => (d.path === "" ? d.message : `${d.path}: ${d.message}`)).join("; ")}`,
    details
  })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The proof API: requests are validated against the catalog and refused whole before anything is
 * queued or charged; accepted proofs are queued and charged to the daily quota in one transaction,
 * and the proof worker (`ProofWorker`) takes them from storage.
 */
export class Proofs extends Context.Tag("@mzk/core/Proofs")<Proofs, {
  readonly create: (principal: Principal, input: unknown) => Effect.Effect<Metered<Proof>, InvalidRequest | RateLimitExceeded | StorageError>
  /** `{proofs: [{type, inputs}, …]}`, 1 to `maxBatchSize` items, accepted or refused as a whole. */
  readonly createBatch: (principal: Principal, input: unknown) => Effect.Effect<Metered<ProofBatch>, InvalidRequest | RateLimitExceeded | StorageError>
  readonly get: (accountId: AccountId, id: string) => Effect.Effect<Proof, ProofNotFound | StorageError>
  readonly list: (accountId: AccountId, query: unknown) => Effect.Effect<ProofList, InvalidRequest | StorageError>
  /** Checks a completed proof against its verification key and records `proof.verified`. */
  readonly verify: (
    principal: Principal,
    id: string
  ) => Effect.Effect<Metered<ProofVerification>, ProofNotFound | ProofNotReady | RateLimitExceeded | InternalError | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* ProofsRepo
      const events = yield* Events
      const rateLimits = yield* RateLimits
      const catalog = yield* CircuitCatalog
      const prover = yield* Prover
      const wakeup = yield* ProofWakeup
      const newId = idMaker(yield* Entropy)

      // Creating a proof is the busiest write: its steps are plain combinators, not generators.
      const toRecord = (accountId: AccountId, batchId: BatchId | null, request: ValidatedProofRequest) =>
        // flatMap, not Effect.zipWith: zipWith runs through Effect.all, a dozen operations more.
        Effect.flatMap(newId("proof"), (id) => Effect.map(now, (createdAt): ProofRecord => ({
          id,
          account_id: accountId,
          batch_id: batchId,
          type: request.spec.type,
          circuit: request.spec.circuit,
          status: "queued",
          inputs: request.inputs,
          public_inputs: request.public_inputs,
          proof_blob: null,
          error: null,
          duration_ms: null,
          attempts: 0,
          lease_expires_at: null,
          created_at: createdAt,
          started_at: null,
          completed_at: null,
          expires_at: null
        })))

      // The quota is charged in the insert's transaction: a failed insert costs nothing.
      const enqueue = (principal: Principal, records: ReadonlyArray<ProofRecord>) =>
        tx.transaction(
          Effect.flatMap(rateLimits.admitProofRequest(principal, { proofs: records.length }), (windows) =>
            repo.insertMany(records).pipe(Effect.zipRight(tx.afterCommit(wakeup.notify)), Effect.as(windows)))
        )

      const create = (principal: Principal, input: unknown) => {
        const checked = validateProofRequest(catalog.get, input)
        if (Either.isLeft(checked)) return Effect.fail(invalid(checked.left))
        return Effect.flatMap(toRecord(principal.account_id, null, checked.right), (record) =>
          Effect.map(enqueue(principal, [record]), (rate_limits) => ({ value: toProof(record), rate_limits })))
      }

      const createBatch = (principal: Principal, input: unknown) =>
        Effect.gen(function*() {
          const { maxBatchSize } = yield* Limits
          if (!isRecord(input) || !Array.isArray(input.proofs)) {
            return yield* invalid([{ path: "proofs", message: "is required and must be an array of {type, inputs}" }])
          }
          const extra = Object.keys(input).filter((k) => k !== "proofs").map((k) => ({ path: k, message: "is not allowed" }))
          const items: ReadonlyArray<unknown> = input.proofs
          if (items.length < 1 || items.length > maxBatchSize) {
            return yield* invalid([...extra, {
              path: "proofs",
              message: `must hold 1 to ${maxBatchSize} proofs, got ${items.length}`
            }])
          }
          const details: Array<ErrorDetail> = [...extra]
          const valid: Array<ValidatedProofRequest> = []
          items.forEach((item, i) =>
            Either.match(validateProofRequest(catalog.get, item, `proofs.${i}.`), {
              onLeft: (d) => void details.push(...d),
              onRight: (v) => void valid.push(v)
            })
          )
          if (details.length > 0) return yield* invalid(details)
          const batchId = yield* newId("batch")
          const records: Array<ProofRecord> = []
          for (const request of valid) records.push(yield* toRecord(principal.account_id, batchId, request))
          const rate_limits = yield* enqueue(principal, records)
          return { value: { batch_id: batchId, proofs: records.map(toProof) }, rate_limits }
        })

      const notFound = (id: string) => new ProofNotFound({ message: `No proof ${JSON.stringify(id)} in this account` })

      const find = (accountId: AccountId, id: string) =>
        isProofId(id)
          ? Effect.flatMap(repo.get(accountId, id), Option.match({
            onNone: () => Effect.fail(notFound(id)),
            onSome: Effect.succeed
          }))
          : Effect.fail(notFound(id))

      const get = (accountId: AccountId, id: string) => Effect.map(find(accountId, id), toProof)

      const list = (accountId: AccountId, query: unknown) =>
        Effect.gen(function*() {
          const q = yield* decodeListQuery(query ?? {})
          const page = yield* repo.list(accountId, { limit: q.limit ?? 20, startingAfter: q.starting_after, status: q.status })
          return { proofs: page.items.map(toProof), total: page.total, has_more: page.has_more }
        })

      const verify = (principal: Principal, id: string) =>
        Effect.gen(function*() {
          // Only a verification that runs is charged: an unknown or unfinished proof costs nothing,
          // so every charged request is one whose response carries the RateLimit fields.
          const record = yield* find(principal.account_id, id)
          if (record.status !== "completed" || record.proof_blob === null) {
            return yield* new ProofNotReady({ message: `Proof ${id} is ${record.status}; only completed proofs can be verified` })
          }
          const rate_limits = yield* rateLimits.admitProofRequest(principal, { proofs: 0 })
          const spec = catalog.get(record.type)
          const internal = new InternalError({ message: "The proof could not be verified" })
          if (Option.isNone(spec)) return yield* internal
          const signals = spec.value.public_signals.map((name) => record.public_inputs[name] ?? "")
          const proof = decodeProofBlob(record.proof_blob)
          if (Option.isNone(proof)) return yield* internal
          const valid = yield* prover.verify(record.circuit, proof.value, signals).pipe(
            Effect.tapError((e) => Effect.logError(`verify ${record.id}: ${e.code}: ${e.message}`)),
            Effect.mapError(() => internal)
          )
          const verification: ProofVerification = {
            proof_id: record.id,
            circuit: record.circuit,
            valid,
            verified_at: yield* now
          }
          yield* events.record(principal.account_id, "proof.verified", verification)
          return { value: verification, rate_limits }
        })

      return { create, createBatch, get, list, verify }
    })
  )
}
