import { Clock, Context, Effect, Either, Layer, Option } from "effect"
import { isRefundedFailure, overdueError, type ProofError, type ProofRecord, settledTimes } from "./proof.js"
import { Limits } from "../kernel/limits.js"
import { ProofsConfig } from "./config.js"
import type { Circuit } from "../circuits/circuit.js"
import { Circuits } from "../circuits/service.js"
import { ProofsRepo } from "./repo.js"
import { Prover, ProverFailure, type ProverOutput } from "./prover.js"
import { RateLimits } from "../rateLimits/service.js"
import { runLeasedJobs } from "../kernel/leasedJobs.js"
import { Telemetry } from "../kernel/telemetry.js"
import { Transactor } from "../kernel/transaction.js"
import { Events } from "../events/service.js"
import { millisFromTimestamp } from "../kernel/time.js"
import { encodeProofBlob } from "./blob.js"
import { proofDigest } from "./digest.js"
import { observeProof } from "./observe.js"
import { ProofCancelWakeup, ProofWakeup } from "./wakeup.js"

/**
 * The proof worker: a scoped background loop that claims queued proofs from storage, proves and
 * verifies them and settles each with its event in one transaction. It claims no more than it can run at once,
 * so a claimed proof starts at once and its timeout measures proving, not waiting; the per-account
 * running limit is enforced by the claim itself, so it holds across processes. It wakes on the
 * in-process nudge (proofs queued, a proof settled) or else every `pollIntervalMs`. While it runs
 * proofs it checks that they are still its own (`ProofsRepo.lostClaims`, every
 * `claimCheckIntervalMs` or at once on a cancel's nudge) and interrupts the proving of those that
 * are not: the prover stops (its thread is released), and the settling writes, conditional on the
 * claim, would have found nothing anyway.
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
      const cancelWakeup = yield* ProofCancelWakeup
      const config = yield* ProofsConfig
      const limits = yield* Limits
      const telemetry = yield* Telemetry
      const rateLimits = yield* RateLimits

      /** The settling write and its event in one transaction; neither when the claim was lost. */
      const settleWith = <E, E2>(
        write: Effect.Effect<Option.Option<ProofRecord>, E>,
        announce: (settled: ProofRecord) => Effect.Effect<unknown, E2>
      ) =>
        tx.transaction(Effect.flatMap(write, Option.match({
          onNone: () => Effect.void,
          onSome: (settled) => Effect.zipRight(announce(settled), tx.afterCommit(observeProof(telemetry, settled, settled.status === "completed" ? "completed" : "failed")))
        })))

      /**
       * Settles a claimed proof with its result. Its times come from one reading of the clock and
       * the claim's `started_at` (`settledTimes`), so `duration_ms` is exactly `finished_at −
       * started_at`; a proof that `neverStarted` (its deadline had passed when it was claimed) loses
       * its `started_at`, as a queued proof failed by the sweep has none.
       */
      const settle = (
        record: ProofRecord,
        result: Either.Either<{ readonly circuit: Circuit; readonly out: ProverOutput }, ProofError>,
        /** The prover's own time, when it ran. */
        provingMs: number | null = null,
        neverStarted = false
      ) =>
        Effect.gen(function*() {
          const nowMs = yield* Clock.currentTimeMillis
          const { duration_ms, expires_at, finished_at } = settledTimes(neverStarted ? null : record.started_at, nowMs, config.retentionMs)
          const proving_ms = provingMs === null ? null : Math.min(duration_ms, Math.max(0, Math.round(provingMs)))
          const outcome = Either.flatMap(result, ({ circuit: { public_signals: names }, out }) => {
            return names.length === out.public_signals.length
              ? Either.right({
                public_inputs: Object.fromEntries(names.map((name, i) => [name, out.public_signals[i]!])),
                proof_blob: encodeProofBlob(out.proof),
                proof_digest: proofDigest(out.proof, out.public_signals)
              })
              : Either.left<ProofError>({ code: "internal", message: "The prover returned an unexpected number of public signals" })
          })
          const { id: proof_id, circuit, circuit_version, created_at, metadata, proving_system } = record
          if (Either.isRight(outcome)) {
            const { proof_blob, proof_digest, public_inputs } = outcome.right
            return yield* settleWith(
              repo.complete(record.id, record.attempts, {
                proof_blob, proof_digest, public_inputs, duration_ms, proving_ms, completed_at: finished_at, expires_at
              }),
              () =>
                events.record(record.account_id, "proof.completed", {
                  proof_id, circuit, circuit_version, proving_system, status: "completed", proof_blob, public_inputs, duration_ms, created_at, metadata
                })
            )
          }
          const error = outcome.left
          yield* settleWith(
            repo.fail(record.id, record.attempts, { error, duration_ms, proving_ms, finished_at, expires_at, ...(neverStarted ? { started_at: null } : {}) }),
            (failed) =>
              Effect.zipRight(
                isRefundedFailure(error.code) ? rateLimits.refundProofs(record.account_id, [created_at]) : Effect.void,
                events.record(record.account_id, "proof.failed", {
                  proof_id, circuit, circuit_version, proving_system, status: "failed", error, public_inputs: failed.public_inputs, duration_ms, created_at, metadata
                })
              )
          )
        })

      const run = (record: ProofRecord) =>
        Effect.gen(function*() {
          yield* observeProof(telemetry, record, "running")
          // The claim started it: its `started_at` is the start every time limit and duration counts from.
          const startedMs = record.started_at === null ? yield* Clock.currentTimeMillis : millisFromTimestamp(record.started_at)
          if (record.attempts > config.maxAttempts) {
            return yield* settle(record, Either.left({
              code: "internal",
              message: `Proof generation was interrupted ${record.attempts - 1} times; giving up`
            }))
          }
          // The request's deadline, if it set one, passed while the proof waited (the sweep fails such
          // proofs too, but a claim may reach one first): it never started.
          const deadlineMs = record.deadline_at === null ? null : millisFromTimestamp(record.deadline_at)
          if (deadlineMs !== null && deadlineMs <= startedMs) {
            return yield* settle(record, Either.left(overdueError), null, true)
          }
          if (record.inputs === null) {
            return yield* settle(record, Either.left({ code: "internal", message: "The proof's inputs are missing" }))
          }
          const circuit = yield* circuits.forProof(record.circuit_id, record.circuit, record.proving_system)
          if (Option.isNone(circuit)) {
            return yield* settle(record, Either.left({ code: "internal", message: "The proof's circuit is missing" }))
          }
          const inputs = record.inputs
          // No proof is reported completed unless it verifies against the circuit's key: a prover
          // fault or a zkey that does not fit its circuit must never reach a client as a proof.
          const verified = (out: ProverOutput) =>
            Effect.filterOrFail(
              prover.verify(circuit.value, out.proof, out.public_signals),
              (valid) => valid,
              () =>
                new ProverFailure({
                  code: "verification_failed",
                  message: "The proof made for these inputs does not verify against the circuit's verification key, so it was " +
                    "not reported: a fault of the prover or of the circuit's artifacts, not of the inputs"
                })
            )
          // The smaller of the server's proof timeout and what is left of the request's deadline.
          const byDeadline = deadlineMs !== null && deadlineMs - startedMs < config.timeoutMs
          const timeoutMs = byDeadline ? deadlineMs - startedMs : config.timeoutMs
          // The prover's own account of its time on the proof, else the call as the clock saw it.
          const proving = { from: yield* Clock.currentTimeMillis, to: null as number | null, reported: undefined as number | undefined }
          const result = yield* prover.prove(circuit.value, inputs).pipe(
            Effect.tapBoth({
              onFailure: (failure) => Effect.sync(() => void (proving.reported = failure.proving_ms)),
              onSuccess: (out) => Effect.sync(() => void (proving.reported = out.proving_ms))
            }),
            // Runs however proving ends: answered, failed, or interrupted by the timeout.
            Effect.ensuring(Effect.map(Clock.currentTimeMillis, (ms) => void (proving.to = ms))),
            Effect.tap(verified),
            Effect.map((out) => ({ circuit: circuit.value, out })),
            Effect.timeoutFail({
              duration: timeoutMs,
              onTimeout: () =>
                new ProverFailure({
                  code: "timeout",
                  message: byDeadline
                    ? `Proof generation passed the request's deadline (timeout_ms, at ${record.deadline_at})`
                    : `Proof generation exceeded ${config.timeoutMs / 1000} s`
                })
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
          yield* settle(record, result, proving.reported ?? (proving.to === null ? null : proving.to - proving.from))
        })

      return yield* runLeasedJobs({
        name: "proof worker",
        capacity: config.workerConcurrency ?? prover.capacity ?? 1,
        // A pool started on first use starts before the first claim, not inside a proof's times.
        ...(prover.ready === undefined ? {} : { ready: prover.ready }),
        leaseMs: config.timeoutMs + config.leaseMarginMs,
        pollIntervalMs: config.pollIntervalMs,
        wakeup,
        // The per-account running limit is the claim's own, so it holds across processes.
        claim: (request) => repo.claimNext({ ...request, maxRunningPerAccount: limits.maxRunningProofsPerAccount }),
        run,
        release: (record) => repo.release(record.id, record.attempts),
        describe: (record) => `proof ${record.id}`,
        watch: {
          intervalMs: config.claimCheckIntervalMs,
          wakeup: cancelWakeup,
          lost: (records) =>
            Effect.map(repo.lostClaims(records.map(({ attempts, id }) => ({ id, attempts }))), (ids) => {
              const lost = new Set<string>(ids)
              return records.filter((record) => lost.has(record.id))
            })
        }
      })
    })
  )
}
