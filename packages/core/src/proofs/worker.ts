import { Clock, Context, Effect, Either, FiberSet, Layer, Option } from "effect"
import type { ProofError, ProofRecord } from "./proof.js"
import { Limits } from "../kernel/limits.js"
import { ProofsConfig } from "./config.js"
import type { Circuit } from "../circuits/circuit.js"
import { Circuits } from "../circuits/service.js"
import { ProofsRepo } from "./repo.js"
import { Prover, ProverFailure, type ProverOutput } from "./prover.js"
import { Transactor } from "../kernel/transaction.js"
import { Events } from "../events/service.js"
import { timestampFromMillis } from "../kernel/time.js"
import { encodeProofBlob } from "./blob.js"
import { ProofWakeup } from "./wakeup.js"

/**
 * The proof worker: a scoped background loop that claims queued proofs from storage, proves them
 * and settles each with its event in one transaction. It claims no more than it can run at once,
 * so a claimed proof starts at once and its timeout measures proving, not waiting; the per-account
 * running limit is enforced by the claim itself, so it holds across processes. It wakes on the
 * in-process nudge (proofs queued, a proof settled) or else every `pollIntervalMs`.
 */
export class ProofWorker extends Context.Tag("@mzk/core/ProofWorker")<ProofWorker, {
  /** Proofs this process is working on now. */
  readonly inFlight: Effect.Effect<number>
}>() {
  static readonly layer = Layer.scoped(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const repo = yield* ProofsRepo
      const events = yield* Events
      const prover = yield* Prover
      const circuits = yield* Circuits
      const wakeup = yield* ProofWakeup
      const config = yield* ProofsConfig
      const limits = yield* Limits
      const capacity = Math.max(1, config.workerConcurrency ?? prover.capacity ?? 1)
      let inFlight = 0
      // Made before the claim loop is forked, so on shutdown the loop stops first and only then
      // are the running proofs interrupted (and handed back): none is claimed after the hand-back.
      const running = yield* FiberSet.make<void>()

      /** The settling write and its event in one transaction; neither when the claim was lost. */
      const settleWith = <E, E2>(
        write: Effect.Effect<Option.Option<ProofRecord>, E>,
        announce: (settled: ProofRecord) => Effect.Effect<unknown, E2>
      ) => tx.transaction(Effect.flatMap(write, Option.match({ onNone: () => Effect.void, onSome: (settled) => Effect.asVoid(announce(settled)) })))

      const settle = (
        record: ProofRecord,
        startedMs: number,
        result: Either.Either<{ readonly circuit: Circuit; readonly out: ProverOutput }, ProofError>
      ) =>
        Effect.gen(function*() {
          const endMs = yield* Clock.currentTimeMillis
          const duration_ms = Math.max(0, Math.round(endMs - startedMs))
          const completed_at = timestampFromMillis(endMs)
          const expires_at = timestampFromMillis(endMs + config.retentionMs)
          const outcome = Either.flatMap(result, ({ circuit: { public_signals: names }, out }) => {
            return names.length === out.public_signals.length
              ? Either.right({
                public_inputs: Object.fromEntries(names.map((name, i) => [name, out.public_signals[i]!])),
                proof_blob: encodeProofBlob(out.proof)
              })
              : Either.left<ProofError>({ code: "internal", message: "The prover returned an unexpected number of public signals" })
          })
          const { id: proof_id, circuit, created_at } = record
          if (Either.isRight(outcome)) {
            const { proof_blob, public_inputs } = outcome.right
            return yield* settleWith(
              repo.complete(record.id, record.attempts, { proof_blob, public_inputs, duration_ms, completed_at, expires_at }),
              () =>
                events.record(record.account_id, "proof.completed", {
                  proof_id, circuit, status: "completed", proof_blob, public_inputs, duration_ms, created_at
                })
            )
          }
          const error = outcome.left
          yield* settleWith(
            repo.fail(record.id, record.attempts, { error, duration_ms, completed_at, expires_at }),
            (failed) =>
              events.record(record.account_id, "proof.failed", {
                proof_id, circuit, status: "failed", error, public_inputs: failed.public_inputs, duration_ms, created_at
              })
          )
        })

      const run = (record: ProofRecord) =>
        Effect.gen(function*() {
          const startedMs = yield* Clock.currentTimeMillis
          if (record.attempts > config.maxAttempts) {
            return yield* settle(record, startedMs, Either.left({
              code: "internal",
              message: `Proof generation was interrupted ${record.attempts - 1} times; giving up`
            }))
          }
          if (record.inputs === null) {
            return yield* settle(record, startedMs, Either.left({ code: "internal", message: "The proof's inputs are missing" }))
          }
          const circuit = yield* circuits.forProof(record.circuit_id, record.circuit)
          if (Option.isNone(circuit)) {
            return yield* settle(record, startedMs, Either.left({ code: "internal", message: "The proof's circuit is missing" }))
          }
          const inputs = record.inputs
          const result = yield* prover.prove(circuit.value, inputs).pipe(
            Effect.map((out) => ({ circuit: circuit.value, out })),
            Effect.timeoutFail({
              duration: config.timeoutMs,
              onTimeout: () => new ProverFailure({ code: "timeout", message: `Proof generation exceeded ${config.timeoutMs / 1000} s` })
            }),
            Effect.catchAllDefect((defect) =>
              Effect.zipRight(
                Effect.logError("prover defect", defect),
                Effect.fail(new ProverFailure({ code: "internal", message: "The prover failed unexpectedly" }))
              )
            ),
            Effect.mapError((f): ProofError => ({ code: f.code, message: f.message })),
            Effect.either
          )
          yield* settle(record, startedMs, result)
        }).pipe(
          // Stopping (shutdown, a redeploy) hands the proof back so any worker takes it over at
          // once, instead of after its lease lapses.
          Effect.onInterrupt(() =>
            repo.release(record.id, record.attempts).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning(`proof ${record.id} could not be handed back; its lease will lapse`, cause))
            )
          ),
          // A storage failure leaves the proof running; its lease lapses and a worker retries it.
          Effect.catchAllCause((cause) => Effect.logError(`proof ${record.id} could not be settled`, cause)),
          Effect.ensuring(Effect.zipRight(Effect.sync(() => void inFlight--), wakeup.notify))
        )

      /**
       * Claims what fits; true when it may be worth claiming again at once. Claiming and starting
       * are not interrupted in between, so no claimed proof is left without a fiber to hand it back.
       */
      const claimOnce = Effect.uninterruptible(Effect.gen(function*() {
        const free = capacity - inFlight
        if (free <= 0) return false
        const nowMs = yield* Clock.currentTimeMillis
        const claimed = yield* repo.claimNext({
          now: timestampFromMillis(nowMs),
          leaseUntil: timestampFromMillis(nowMs + config.timeoutMs + config.leaseMarginMs),
          maxRunningPerAccount: limits.maxRunningProofsPerAccount,
          limit: free
        })
        inFlight += claimed.length
        for (const record of claimed) yield* FiberSet.run(running, Effect.interruptible(run(record)))
        return claimed.length === free
      }))

      const idle = Effect.raceFirst(wakeup.take, Effect.sleep(config.pollIntervalMs))

      yield* Effect.gen(function*() {
        const more = yield* claimOnce.pipe(
          Effect.catchAllCause((cause) => Effect.as(Effect.logError("proof worker: claim failed", cause), false))
        )
        if (!more) yield* idle
      }).pipe(Effect.forever, Effect.forkScoped)

      return { inFlight: Effect.sync(() => inFlight) }
    })
  )
}
