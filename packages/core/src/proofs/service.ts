import { Clock, Context, Effect, Either, Layer, Option, Schema } from "effect"
import { type Circuit, parseCircuitRef } from "../circuits/circuit.js"
import { CircuitsRepo } from "../circuits/repo.js"
import { BuiltinCircuits, Circuits } from "../circuits/service.js"
import { Events } from "../events/service.js"
import {
  BatchNotFound,
  CircuitNotReady,
  type ErrorDetail,
  InternalError,
  type InvalidRequest,
  ProofNotCancelable,
  ProofNotFound,
  ProofNotReady,
  type RateLimitExceeded,
  type StorageError
} from "../kernel/errors.js"
import { invalidRequest } from "../kernel/decode.js"
import { type AccountId, BatchId, Ids, ProofId } from "../kernel/ids.js"
import { Limits } from "../kernel/limits.js"
import { MAX_METADATA_KEYS, type Metadata, metadataOf } from "../kernel/metadata.js"
import { pageOf } from "../kernel/paging.js"
import { now, timestampFromMillis } from "../kernel/time.js"
import { Telemetry } from "../kernel/telemetry.js"
import { Transactor } from "../kernel/transaction.js"
import { RateLimits } from "../rateLimits/service.js"
import { decodeProofBlob } from "./blob.js"
import { proofCalldata, type SolidityCalldata } from "./calldata.js"
import { provingSystemFor, unknownTypeDetail, validateCircuitInputs, type ValidatedProofRequest } from "./inputs.js"
import {
  type CreateProofBatchInput,
  type CreateProofInput,
  DEFAULT_PROOF_PRIORITY,
  type ListProofsQuery,
  type Proof,
  type ProofBatch,
  type ProofBatchCancellation,
  type ProofPriority,
  type ProofRecord,
  type ProofVerification,
  metadataFilterOf,
  toProof
} from "./proof.js"
import { Prover } from "./prover.js"
import { ProofsConfig } from "./config.js"
import { type CancelTarget, ProofsRepo } from "./repo.js"
import { observeProof } from "./observe.js"
import { ProofCancelWakeup, ProofWakeup } from "./wakeup.js"

export interface ProofList {
  readonly proofs: ReadonlyArray<Proof>
  readonly total: number
  readonly has_more: boolean
}

const isProofId = Schema.is(ProofId)
const isBatchId = Schema.is(BatchId)

/** A request's validated inputs and circuit, with how it is to be scheduled. */
interface AcceptedRequest extends ValidatedProofRequest {
  /** The request's `type`, as sent (`name` or `name@N`). */
  readonly type: string
  readonly priority: ProofPriority
  readonly timeout_ms: number | null
}

/** One request checked against the circuit its `type` names. */
type Checked =
  | { readonly _tag: "invalid"; readonly details: ReadonlyArray<ErrorDetail> }
  | { readonly _tag: "unready"; readonly circuit: Circuit }
  | { readonly _tag: "valid"; readonly request: AcceptedRequest }

/** A circuit of the account's own that cannot be proven yet, or ever (named as `name@N`: a name's versions differ). */
const notReady = (circuit: Circuit) => {
  const named = JSON.stringify(`${circuit.name}@${circuit.version}`)
  return new CircuitNotReady({
    message: circuit.status === "compiling"
      ? `Circuit ${named} is still compiling; request proofs once it is ready (the circuit.ready event)`
      : `Circuit ${named} failed to build (${circuit.error?.code ?? "internal"}); fix the upload and add it again`
  })
}

/**
 * The proof API: requests are validated against the circuit their `type` names (a built-in one or
 * the account's own, ready one) and refused whole before anything is queued or charged; accepted proofs are queued and charged to the daily quota in one transaction,
 * and the proof worker (`ProofWorker`) takes them from storage.
 */
export class Proofs extends Context.Tag("@mzk/core/Proofs")<Proofs, {
  /**
   * Metered: charged to `accountId`'s daily quota and to the acting key's minute (the current
   * `RequestContext`'s actor; none outside a request); `metered` reads the windows charged.
   */
  readonly create: (
    accountId: AccountId,
    input: CreateProofInput
  ) => Effect.Effect<Proof, InvalidRequest | CircuitNotReady | RateLimitExceeded | StorageError>
  /** `{proofs: [{type, inputs}, …]}`, 1 to `maxBatchSize` items, accepted or refused as a whole. */
  readonly createBatch: (
    accountId: AccountId,
    input: CreateProofBatchInput
  ) => Effect.Effect<ProofBatch, InvalidRequest | CircuitNotReady | RateLimitExceeded | StorageError>
  readonly get: (accountId: AccountId, id: string) => Effect.Effect<Proof, ProofNotFound | StorageError>
  readonly list: (accountId: AccountId, query: ListProofsQuery) => Effect.Effect<ProofList, InvalidRequest | StorageError>
  /** Checks a completed proof against its verification key and records `proof.verified`; metered as `create`. */
  readonly verify: (
    accountId: AccountId,
    id: string
  ) => Effect.Effect<ProofVerification, ProofNotFound | ProofNotReady | RateLimitExceeded | InternalError | StorageError>
  /** A completed proof as the call of a Solidity verifier (`verifyProof(a, b, c, public_signals)`). */
  readonly calldata: (accountId: AccountId, id: string) => Effect.Effect<SolidityCalldata, ProofNotFound | ProofNotReady | InternalError | StorageError>
  /**
   * Cancels a queued or running proof (Stripe's PaymentIntent cancel): `canceled` at once, its
   * private inputs dropped, its unit given back to the daily quota, `proof.canceled` recorded, all
   * in one transaction; a running proof's worker then stops proving it. A proof that has settled
   * (completed, failed, canceled, expired) is `ProofNotCancelable`, naming its status.
   */
  readonly cancel: (accountId: AccountId, id: string) => Effect.Effect<Proof, ProofNotFound | ProofNotCancelable | StorageError>
  /**
   * Cancels every queued or running proof of a batch, as `cancel` does each, in one transaction;
   * answers with the batch's proofs as they stand and how many were canceled, 0 when none could be
   * (the batch had settled: not an error, so a retry or a cancel racing the last proofs succeeds).
   */
  readonly cancelBatch: (accountId: AccountId, batchId: string) => Effect.Effect<ProofBatchCancellation, BatchNotFound | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* ProofsRepo
      const events = yield* Events
      const rateLimits = yield* RateLimits
      const builtins = yield* BuiltinCircuits
      const circuits = yield* Circuits
      const circuitsRepo = yield* CircuitsRepo
      const prover = yield* Prover
      const wakeup = yield* ProofWakeup
      const cancelWakeup = yield* ProofCancelWakeup
      const config = yield* ProofsConfig
      const ids = yield* Ids
      const telemetry = yield* Telemetry

      /**
       * The circuit `type` names for the account: a built-in one at once, else its own from storage
       * (`name@N` that version, `name` its newest ready one; see `Circuits.forRequest`).
       */
      const lookup = (accountId: AccountId, type: string) => {
        const builtin = builtins.get(type)
        return Option.isSome(builtin) ? Effect.succeed(builtin) : circuits.forRequest(accountId, type)
      }

      /** Versions a "name@N" that names none is told about (newest first); more are marked "…". */
      const HINTED_VERSIONS = 10

      /**
       * What a `type` that names nothing could have been, when it is `name@N` of a name the caller
       * has: the versions there are. Nothing for other names, so no other account's is revealed.
       */
      const unknownTypeHint = (accountId: AccountId, type: string): Effect.Effect<string | undefined, StorageError> => {
        const ref = parseCircuitRef(type)
        if (ref.version === null) return Effect.succeed(undefined)
        if (Option.isSome(builtins.get(ref.name))) {
          return Effect.succeed(`a built-in circuit has one version: send ${JSON.stringify(ref.name)}`)
        }
        return circuits.versions(accountId, ref.name, { limit: HINTED_VERSIONS + 1 }).pipe(
          Effect.map((page) => {
            const versions = page.items.slice(0, HINTED_VERSIONS).map((c) => c.version)
            const more = page.items.length > HINTED_VERSIONS || page.has_more ? ", …" : ""
            return `${ref.name} has no version ${ref.version} (its versions: ${versions.join(", ")}${more})`
          }),
          Effect.catchTags({ CircuitNotFound: () => Effect.succeed(undefined), InvalidRequest: () => Effect.succeed(undefined) })
        )
      }

      /**
       * One request against its circuit: refused as an unknown type when the caller cannot see it
       * (so no other account's circuit is revealed), as not ready when its own is not built.
       */
      const check = (found: Option.Option<Circuit>, input: CreateProofInput, prefix = "", hint?: string): Checked => {
        // A deadline past the server's proof timeout is refused, not clamped (Stripe refuses a
        // parameter out of its range): a caller relying on it learns the limit at once.
        const deadline: Array<ErrorDetail> = input.timeout_ms !== undefined && input.timeout_ms > config.timeoutMs
          ? [{ path: `${prefix}timeout_ms`, message: `must be at most ${config.timeoutMs} (this server's proof timeout), got ${input.timeout_ms}` }]
          : []
        if (Option.isNone(found)) return { _tag: "invalid", details: [unknownTypeDetail(input.type, prefix, hint), ...deadline] }
        const circuit = found.value
        if (deadline.length > 0) return { _tag: "invalid", details: deadline }
        if (circuit.status !== "ready") return { _tag: "unready", circuit }
        const system = provingSystemFor(circuit, input.proving_system, prefix)
        if (Either.isLeft(system)) return { _tag: "invalid", details: system.left }
        return Either.match(validateCircuitInputs(circuit, input.inputs, prefix), {
          onLeft: (details): Checked => ({ _tag: "invalid", details }),
          onRight: (valid): Checked => ({
            _tag: "valid",
            request: { ...valid, type: input.type, circuit, proving_system: system.right, priority: input.priority ?? DEFAULT_PROOF_PRIORITY, timeout_ms: input.timeout_ms ?? null }
          })
        })
      }

      // Creating a proof is the busiest write: its steps are plain combinators, not generators.
      const toRecord = (accountId: AccountId, batchId: BatchId | null, request: AcceptedRequest, metadata: Metadata) =>
        // flatMap, not Effect.zipWith: zipWith runs through Effect.all, a dozen operations more.
        Effect.flatMap(ids.make("proof"), (id) => Effect.map(Clock.currentTimeMillis, (createdMs): ProofRecord => ({
          id,
          account_id: accountId,
          batch_id: batchId,
          // As the request named it (`name@2`); the circuit and version it resolved to are beside it.
          type: request.type,
          circuit: request.circuit.name,
          circuit_id: request.circuit.id,
          circuit_version: request.circuit.version,
          proving_system: request.proving_system,
          status: "queued",
          inputs: request.inputs,
          public_inputs: request.public_inputs,
          proof_blob: null,
          error: null,
          duration_ms: null,
          proving_ms: null,
          priority: request.priority,
          deadline_at: request.timeout_ms === null ? null : timestampFromMillis(createdMs + request.timeout_ms),
          attempts: 0,
          lease_expires_at: null,
          created_at: timestampFromMillis(createdMs),
          started_at: null,
          completed_at: null,
          finished_at: null,
          canceled_at: null,
          expires_at: null,
          metadata
        })))

      /**
       * An account's circuits the records use, held against removal until the insert commits: one
       * removed since the request was checked is then an unknown type, as it would be now, instead
       * of a queued proof whose artifacts are gone. Built-in circuits need no hold.
       */
      const holdCircuits = (records: ReadonlyArray<ProofRecord>, batch: boolean) => {
        if (records.every((r) => r.circuit_id === null)) return Effect.void
        const ids = [...new Set(records.flatMap((r) => (r.circuit_id === null ? [] : [r.circuit_id])))]
        return Effect.flatMap(circuitsRepo.holdLive(ids), (removed) => {
          if (removed.length === 0) return Effect.void
          const gone = new Set<string>(removed)
          return Effect.fail(invalidRequest(records.flatMap((r, i) =>
            r.circuit_id !== null && gone.has(r.circuit_id) ? [unknownTypeDetail(r.type, batch ? `proofs.${i}.` : "")] : [])))
        })
      }

      /** The API records of `records`, with the queue positions of those that are queued. */
      const withPositions = (accountId: AccountId, records: ReadonlyArray<ProofRecord>) => {
        const queued = records.filter((r) => r.status === "queued").map((r) => r.id)
        return queued.length === 0
          ? Effect.succeed(records.map((r) => toProof(r)))
          : Effect.map(repo.queuePositions(accountId, queued), (positions) => records.map((r) => toProof(r, positions.get(r.id) ?? null)))
      }

      // The quota is charged in the insert's transaction: a failed insert costs nothing. The
      // positions are read in it too, so they count what the insert joined.
      const enqueue = (accountId: AccountId, records: ReadonlyArray<ProofRecord>, batch: boolean) =>
        tx.transaction(
          Effect.zipRight(holdCircuits(records, batch), Effect.flatMap(rateLimits.admitProofRequest(accountId, { proofs: records.length }), () =>
            repo.insertMany(records).pipe(
              Effect.zipRight(tx.afterCommit(Effect.zipRight(wakeup.notify, Effect.forEach(records, (record) => observeProof(telemetry, record, "queued"), { discard: true })))),
              Effect.zipRight(withPositions(accountId, records))
            )))
        )

      /** The circuit `type` names, and when it names none, the hint for the caller. */
      const resolve = (
        accountId: AccountId,
        type: string
      ): Effect.Effect<{ readonly found: Option.Option<Circuit>; readonly hint: string | undefined }, StorageError> =>
        Effect.flatMap(lookup(accountId, type), (found) =>
          Effect.map(Option.isSome(found) ? Effect.succeed(undefined) : unknownTypeHint(accountId, type), (hint) => ({ found, hint })))

      const create = (accountId: AccountId, input: CreateProofInput) =>
        Effect.flatMap(resolve(accountId, input.type), (
          { found, hint }
        ): Effect.Effect<Proof, InvalidRequest | CircuitNotReady | RateLimitExceeded | StorageError> => {
          const checked = check(found, input, "", hint)
          if (checked._tag === "invalid") return Effect.fail(invalidRequest(checked.details))
          if (checked._tag === "unready") return Effect.fail(notReady(checked.circuit))
          return Effect.flatMap(toRecord(accountId, null, checked.request, metadataOf(input.metadata)), (record) =>
            Effect.map(enqueue(accountId, [record], false), (proofs) => proofs[0]!))
        })

      const createBatch = (accountId: AccountId, { metadata: batchMetadata, proofs: items }: CreateProofBatchInput) =>
        Effect.gen(function*() {
          const { maxBatchSize } = yield* Limits
          if (items.length < 1 || items.length > maxBatchSize) {
            return yield* invalidRequest([{ path: "proofs", message: `must hold 1 to ${maxBatchSize} proofs, got ${items.length}` }])
          }
          const found = new Map<string, { readonly found: Option.Option<Circuit>; readonly hint: string | undefined }>()
          for (const { type } of items) if (!found.has(type)) found.set(type, yield* resolve(accountId, type))
          const details: Array<ErrorDetail> = []
          const valid: Array<AcceptedRequest> = []
          // The batch's pairs under each item's own; an empty value (either's) stores nothing.
          const batchPairs = metadataOf(batchMetadata)
          const metadata = items.map((item) => metadataOf({ ...batchPairs, ...item.metadata }))
          metadata.forEach((pairs, i) => {
            const count = Object.keys(pairs).length
            if (count > MAX_METADATA_KEYS) {
              details.push({
                path: `proofs.${i}.metadata`,
                message: `metadata may hold at most ${MAX_METADATA_KEYS} keys, got ${count} with the batch's metadata`
              })
            }
          })
          let unready: Circuit | undefined
          items.forEach((item, i) => {
            const { found: circuit, hint } = found.get(item.type)!
            const checked = check(circuit, item, `proofs.${i}.`, hint)
            if (checked._tag === "invalid") details.push(...checked.details)
            else if (checked._tag === "unready") unready ??= checked.circuit
            else valid.push(checked.request)
          })
          // A malformed request is refused as such first; a circuit that is not built makes the rest moot.
          if (details.length > 0) return yield* invalidRequest(details)
          if (unready !== undefined) return yield* notReady(unready)
          const batchId = yield* ids.make("batch")
          const records: Array<ProofRecord> = []
          for (const [i, request] of valid.entries()) records.push(yield* toRecord(accountId, batchId, request, metadata[i]!))
          return { batch_id: batchId, metadata: batchPairs, proofs: yield* enqueue(accountId, records, true) }
        })

      const notFound = (id: string) => new ProofNotFound({ message: `No proof ${JSON.stringify(id)} in this account` })

      const find = (accountId: AccountId, id: string) =>
        isProofId(id)
          ? Effect.flatMap(repo.get(accountId, id), Option.match({
            onNone: () => Effect.fail(notFound(id)),
            onSome: Effect.succeed
          }))
          : Effect.fail(notFound(id))

      const get = (accountId: AccountId, id: string) =>
        Effect.flatMap(find(accountId, id), (record) => Effect.map(withPositions(accountId, [record]), (proofs) => proofs[0]!))

      const list = (accountId: AccountId, query: ListProofsQuery) =>
        Effect.flatMap(
          Effect.flatMap(pageOf(query), (page) => repo.list(accountId, { ...page, status: query.status, metadata: metadataFilterOf(query) })),
          (page) => Effect.map(withPositions(accountId, page.items), (proofs) => ({ proofs, total: page.total, has_more: page.has_more }))
        )

      const completed = (accountId: AccountId, id: string, only: string) =>
        Effect.flatMap(find(accountId, id), (record) =>
          record.status === "completed" && record.proof_blob !== null
            ? Effect.succeed({ ...record, proof_blob: record.proof_blob })
            : Effect.fail(new ProofNotReady({ message: `Proof ${id} is ${record.status}; only completed proofs ${only}` })))

      /**
       * A completed proof with the circuit it was made with (even if removed, or its name reused,
       * since) and its public signals in that circuit's order: what verifying and calldata take.
       */
      const provenWith = (record: ProofRecord & { readonly proof_blob: string }, internal: InternalError) =>
        Effect.gen(function*() {
          const circuit = yield* circuits.forProof(record.circuit_id, record.circuit, record.proving_system)
          const proof = decodeProofBlob(record.proof_blob)
          if (Option.isNone(circuit) || Option.isNone(proof)) return yield* internal
          const signals = circuit.value.public_signals.map((name) => record.public_inputs[name])
          if (signals.some((signal) => signal === undefined)) return yield* internal
          return { circuit: circuit.value, proof: proof.value, signals: signals as ReadonlyArray<string> }
        })

      const verify = (accountId: AccountId, id: string) =>
        Effect.gen(function*() {
          // Only a verification that runs is charged: an unknown or unfinished proof costs nothing,
          // so every charged request is one whose response carries the RateLimit fields.
          const record = yield* completed(accountId, id, "can be verified")
          yield* rateLimits.admitProofRequest(accountId, { proofs: 0 })
          const internal = new InternalError({ message: "The proof could not be verified" })
          const { circuit, proof, signals } = yield* provenWith(record, internal)
          const valid = yield* prover.verify(circuit, proof, signals).pipe(
            Effect.tapError((e) => Effect.logError(`verify ${record.id}: ${e.code}: ${e.message}`)),
            Effect.mapError(() => internal)
          )
          const verification: ProofVerification = {
            proof_id: record.id,
            circuit: record.circuit,
            circuit_version: record.circuit_version,
            proving_system: record.proving_system,
            valid,
            verified_at: yield* now,
            metadata: record.metadata
          }
          yield* events.record(accountId, "proof.verified", verification)
          return verification
        })

      const calldata = (accountId: AccountId, id: string) =>
        Effect.gen(function*() {
          const record = yield* completed(accountId, id, "have calldata")
          const internal = new InternalError({ message: "The proof's calldata could not be made" })
          const { proof, signals } = yield* provenWith(record, internal)
          return yield* Either.match(proofCalldata(proof, signals), {
            onLeft: (error) => Effect.zipRight(Effect.logError(`calldata of ${record.id}: ${error.message}`), Effect.fail(internal)),
            onRight: Effect.succeed
          })
        })

      /**
       * The cancel of `target`'s queued and running proofs with everything it entails, in one
       * transaction (joining the caller's): the conditional write, the quota refund, one
       * `proof.canceled` each; once committed, this process's worker is nudged if one was running.
       */
      const cancelProofs = (accountId: AccountId, target: CancelTarget) =>
        tx.transaction(Effect.gen(function*() {
          const nowMs = yield* Clock.currentTimeMillis
          const canceled_at = timestampFromMillis(nowMs)
          const rows = yield* repo.cancel(accountId, target, { canceled_at, expires_at: timestampFromMillis(nowMs + config.retentionMs) })
          if (rows.length === 0) return rows
          yield* rateLimits.refundProofs(accountId, rows.map((row) => row.created_at))
          for (const row of rows) {
            yield* events.record(accountId, "proof.canceled", {
              proof_id: row.id,
              circuit: row.circuit,
              circuit_version: row.circuit_version,
              status: "canceled",
              canceled_at,
              created_at: row.created_at,
              metadata: row.metadata
            })
          }
          // A canceled proof that was running has started_at; a queued one never had.
          const wasRunning = rows.some((row) => row.started_at !== null)
          yield* tx.afterCommit(Effect.zipRight(
            wasRunning ? cancelWakeup.notify : Effect.void,
            Effect.forEach(rows, (row) => observeProof(telemetry, row, "canceled"), { discard: true })
          ))
          return rows
        }))

      const cancel = (accountId: AccountId, id: string) =>
        isProofId(id)
          ? Effect.flatMap(cancelProofs(accountId, { proof: id }), (rows) =>
            rows.length > 0
              ? Effect.succeed(toProof(rows[0]!))
              : Effect.flatMap(find(accountId, id), (record) =>
                Effect.fail(
                  new ProofNotCancelable({ message: `Proof ${id} is ${record.status}; only queued or running proofs can be canceled` })
                )))
          : Effect.fail(notFound(id))

      const batchNotFound = (id: string) => new BatchNotFound({ message: `No batch ${JSON.stringify(id)} in this account` })

      const cancelBatch = (accountId: AccountId, batchId: string) =>
        isBatchId(batchId)
          ? tx.transaction(Effect.gen(function*() {
            const canceled = yield* cancelProofs(accountId, { batch: batchId })
            // Read after the cancel, in its transaction: the batch as this request leaves it.
            const proofs = yield* repo.listBatch(accountId, batchId)
            if (proofs.length === 0) return yield* batchNotFound(batchId)
            return { batch_id: batchId, canceled_count: canceled.length, proofs: yield* withPositions(accountId, proofs) }
          }))
          : Effect.fail(batchNotFound(batchId))

      return { calldata, cancel, cancelBatch, create, createBatch, get, list, verify }
    })
  )
}
