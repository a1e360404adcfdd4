import {
  Circuits,
  decodeProofBlob,
  InternalError,
  ProofId,
  ProofNotFound,
  ProofNotReady,
  Proofs,
  ProofsRepo
} from "@mzk/core"
import { Effect, Either, Option, Schema } from "effect"
// @mzk/core does not export calldata.ts from its index yet (c17-build wrote it, the index is c17-core's):
// once it does, import groth16Calldata from "@mzk/core".
import { groth16Calldata } from "../../../core/src/proofs/calldata.js"
import { implement } from "./handler.js"

const isProofId = Schema.is(ProofId)

export const ProofsHandlers = Effect.gen(function*() {
  const proofs = yield* Proofs
  const repo = yield* ProofsRepo
  const circuits = yield* Circuits
  const notFound = (id: string) => new ProofNotFound({ message: `No proof ${JSON.stringify(id)} in this account` })
  return implement("proofs", {
    create: ({ payload, principal }) => proofs.create(principal, payload),
    createBatch: ({ payload, principal }) => proofs.createBatch(principal, payload),
    list: ({ principal, urlParams }) => proofs.list(principal.account_id, urlParams),
    get: ({ path, principal }) => proofs.get(principal.account_id, path.id),
    verify: ({ path, principal }) => proofs.verify(principal, path.id),
    calldata: ({ path, principal }) =>
      Effect.gen(function*() {
        if (!isProofId(path.id)) return yield* notFound(path.id)
        const record = Option.getOrUndefined(yield* repo.get(principal.account_id, path.id))
        if (record === undefined) return yield* notFound(path.id)
        if (record.status !== "completed" || record.proof_blob === null) {
          return yield* new ProofNotReady({ message: `Proof ${path.id} is ${record.status}; only a completed proof has calldata` })
        }
        // The circuit the proof was made with (even if removed or its name reused since) gives
        // the order of its public signals, which the verifier takes as one array.
        const circuit = Option.getOrUndefined(yield* circuits.forProof(record.circuit_id, record.circuit))
        const proof = Option.getOrUndefined(decodeProofBlob(record.proof_blob))
        const signals = circuit?.public_signals.map((name) => record.public_inputs[name])
        if (proof === undefined || signals === undefined || signals.some((signal) => signal === undefined)) {
          return yield* new InternalError({ message: "The proof's calldata could not be made" })
        }
        return yield* Either.match(groth16Calldata(proof, signals as ReadonlyArray<string>), {
          onLeft: (error) =>
            Effect.zipRight(
              Effect.logError(`calldata of ${record.id}: ${error.message}`),
              Effect.fail(new InternalError({ message: "The proof's calldata could not be made" }))
            ),
          onRight: Effect.succeed
        })
      })
  })
})
