import { Context, Effect, Layer, Option, Schema } from "effect"
import { AuditLog } from "../audit/service.js"
import { Circuits } from "../circuits/service.js"
import { Events } from "../events/service.js"
import { invalidRequest } from "../kernel/decode.js"
import {
  CircuitNotReady,
  type ErrorDetail,
  InternalError,
  type InvalidRequest,
  type RateLimitExceeded,
  type StorageError,
  type VerificationKeyLimitReached,
  VerificationKeyNotFound
} from "../kernel/errors.js"
import { Limits } from "../kernel/limits.js"
import { type AccountId, Ids, VerificationKeyId } from "../kernel/ids.js"
import { pageOf } from "../kernel/paging.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import { proofDigest } from "../proofs/digest.js"
import { ProofsRepo } from "../proofs/repo.js"
import { RateLimits } from "../rateLimits/service.js"
import { VerificationKeysRepo } from "./repo.js"
import {
  type CreateVerificationInput,
  type CreateVerificationKeyInput,
  type ListVerificationKeysQuery,
  toVerificationKey,
  type Verification,
  type VerificationKey,
  type VerificationKeyRecord
} from "./verification.js"
import { Verifier, type VerifierInputInvalid } from "./verifier.js"

export interface VerificationKeyList {
  readonly verification_keys: ReadonlyArray<VerificationKey>
  readonly total: number
  readonly has_more: boolean
}

const isVerificationKeyId = Schema.is(VerificationKeyId)

/** The key sources of a verification request: exactly one is given. */
const KEY_SOURCES = ["verification_key", "verification_key_id", "circuit"] as const

const badInput = (error: VerifierInputInvalid): InvalidRequest => invalidRequest(error.details)
const refuse = (...details: ReadonlyArray<ErrorDetail>) => Effect.fail(invalidRequest(details))

/**
 * Verification of proofs made anywhere (`POST /verifications`) against a key sent inline, a
 * registered key or a circuit's, and the registered keys themselves. Requests are checked whole
 * (which key, which system, every field of key, proof and signals) before anything is charged or
 * any pairing computed; a proof mzk made for the account is recognised by its digest and records
 * `proof.verified` as `GET /proofs/{id}/verify` does; a foreign proof records nothing.
 */
export class Verifications extends Context.Tag("@mzk/core/Verifications")<Verifications, {
  /** Metered as `Proofs.verify`: one request against the acting key's minute and the account's day, no proof units. */
  readonly verify: (
    accountId: AccountId,
    input: CreateVerificationInput
  ) => Effect.Effect<Verification, InvalidRequest | CircuitNotReady | RateLimitExceeded | InternalError | StorageError>
  /** Metered as `verify`; at most `Limits.maxVerificationKeysPerAccount` per account. */
  readonly createKey: (
    accountId: AccountId,
    input: CreateVerificationKeyInput
  ) => Effect.Effect<VerificationKey, InvalidRequest | VerificationKeyLimitReached | RateLimitExceeded | StorageError>
  readonly listKeys: (accountId: AccountId, query: ListVerificationKeysQuery) => Effect.Effect<VerificationKeyList, InvalidRequest | StorageError>
  readonly getKey: (accountId: AccountId, id: string) => Effect.Effect<VerificationKey, VerificationKeyNotFound | StorageError>
  readonly deleteKey: (accountId: AccountId, id: string) => Effect.Effect<void, VerificationKeyNotFound | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* VerificationKeysRepo
      const proofs = yield* ProofsRepo
      const verifier = yield* Verifier
      const circuits = yield* Circuits
      const rateLimits = yield* RateLimits
      const events = yield* Events
      const audit = yield* AuditLog
      const ids = yield* Ids

      const notFound = (id: string) => new VerificationKeyNotFound({ message: `No verification key ${JSON.stringify(id)} in this account` })

      const find = (accountId: AccountId, id: string) =>
        isVerificationKeyId(id)
          ? Effect.flatMap(repo.get(accountId, id), Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))
          : Effect.fail(notFound(id))

      const mismatch = (system: ProvingSystem, owner: string, actual: ProvingSystem) =>
        refuse({ path: "proving_system", message: `${owner} is a ${actual} key, not ${system}` })

      /** The key a request names, as the verifier takes it. */
      const keyOf = (accountId: AccountId, input: CreateVerificationInput) =>
        Effect.gen(function*() {
          const given = KEY_SOURCES.filter((source) => input[source] !== undefined)
          if (given.length !== 1) {
            return yield* given.length === 0
              ? refuse({ path: "", message: "one of verification_key, verification_key_id or circuit is required" })
              : refuse(...given.slice(1).map((path) => ({ path, message: `only one of ${given.join(", ")} may be given` })))
          }
          const system = input.proving_system
          if (input.verification_key_id !== undefined) {
            const id = input.verification_key_id
            const found = isVerificationKeyId(id) ? yield* repo.get(accountId, id) : Option.none()
            if (Option.isNone(found)) return yield* refuse({ path: "verification_key_id", message: `no verification key ${JSON.stringify(id)} in this account` })
            const record = found.value
            if (record.proving_system !== system) return yield* mismatch(system, `verification key ${record.id}`, record.proving_system)
            return { key: record.verification_key as unknown, verification_key_id: record.id, circuit: null }
          }
          if (input.circuit !== undefined) {
            const name = input.circuit
            // As a proof's `type` names it: `name` the newest ready version, `name@N` exactly N.
            const found = yield* circuits.forRequest(accountId, name)
            if (Option.isNone(found)) return yield* refuse({ path: "circuit", message: `no circuit ${JSON.stringify(name)} in this account or built in` })
            const circuit = found.value
            if (circuit.status !== "ready") {
              return yield* new CircuitNotReady({ message: `Circuit ${JSON.stringify(name)} is ${circuit.status}; its verification key exists once it is ready` })
            }
            // A built-in circuit may have keys for several systems: the one asked for, where it has it.
            const keyed = circuits.asSystem(circuit, system)
            if (Option.isNone(keyed)) return yield* mismatch(system, `circuit ${JSON.stringify(name)}`, circuit.proving_system)
            return { key: keyed.value.verification_key, verification_key_id: null, circuit: circuit.name }
          }
          return { key: input.verification_key as unknown, verification_key_id: null, circuit: null }
        })

      const verify = (accountId: AccountId, input: CreateVerificationInput) =>
        Effect.gen(function*() {
          const source = yield* keyOf(accountId, input)
          const run = yield* verifier.prepare(input.proving_system, source.key, input.proof, input.public_signals).pipe(
            Effect.mapError((error) =>
              // A registered or a circuit's key was checked when it was made: a fault in it is ours.
              source.key !== input.verification_key && error.details.some((d) => d.path.startsWith("verification_key"))
                ? new InternalError({ message: "The stored verification key could not be read" })
                : badInput(error)
            )
          )
          yield* rateLimits.admitProofRequest(accountId, { proofs: 0 })
          const valid = yield* run
          const verified_at = yield* now
          const own = yield* proofs.findByDigest(accountId, proofDigest(input.proof, input.public_signals))
          if (Option.isSome(own)) {
            yield* events.record(accountId, "proof.verified", { proof_id: own.value.id, circuit: own.value.circuit, circuit_version: own.value.circuit_version, proving_system: own.value.proving_system, valid, verified_at, metadata: own.value.metadata })
          }
          return {
            valid,
            proving_system: input.proving_system,
            verification_key_id: source.verification_key_id,
            circuit: source.circuit,
            proof_id: Option.isSome(own) ? own.value.id : null,
            public_signals: input.public_signals.length,
            verified_at
          } satisfies Verification
        })

      const createKey = (accountId: AccountId, input: CreateVerificationKeyInput) =>
        Effect.gen(function*() {
          const checked = yield* verifier.checkKey(input.proving_system, input.verification_key).pipe(Effect.mapError(badInput))
          yield* rateLimits.admitProofRequest(accountId, { proofs: 0 })
          const limits = yield* Limits
          const record: VerificationKeyRecord = {
            id: yield* ids.make("verificationKey"),
            account_id: accountId,
            name: input.name ?? null,
            proving_system: input.proving_system,
            n_public: checked.n_public,
            verification_key: input.verification_key,
            created_at: yield* now
          }
          yield* tx.transaction(Effect.zipRight(
            repo.insert(record, { maxPerAccount: limits.maxVerificationKeysPerAccount }),
            audit.record(accountId, "verification_key.created", { type: "verification_key", id: record.id, name: record.name })
          ))
          return toVerificationKey(record)
        })

      const listKeys = (accountId: AccountId, query: ListVerificationKeysQuery) =>
        Effect.map(Effect.flatMap(pageOf(query), (page) => repo.list(accountId, page)), (page) => ({
          verification_keys: page.items.map(toVerificationKey),
          total: page.total,
          has_more: page.has_more
        }))

      const getKey = (accountId: AccountId, id: string) => Effect.map(find(accountId, id), toVerificationKey)

      const deleteKey = (accountId: AccountId, id: string) =>
        isVerificationKeyId(id)
          ? tx.transaction(Effect.gen(function*() {
            const removed = yield* repo.remove(accountId, id)
            if (Option.isNone(removed)) return yield* notFound(id)
            yield* audit.record(accountId, "verification_key.deleted", { type: "verification_key", id, name: removed.value.name })
          }))
          : Effect.fail(notFound(id))

      return { verify, createKey, listKeys, getKey, deleteKey }
    })
  )
}
