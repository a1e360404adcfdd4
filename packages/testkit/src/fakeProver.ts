import { type CircuitInputs, type Groth16Proof, Prover, ProverFailure, type ProofErrorCode, type ProverOutput } from "@mzk/core"
import { Context, Duration, Effect, Layer, Option, Ref } from "effect"
import { FAKE_CIRCUIT_SPECS } from "./fakeCatalog.js"

export interface FakeProverCall {
  /** 0 for the first `prove` call of this prover, then counting up. */
  readonly index: number
  readonly circuit: string
  readonly inputs: CircuitInputs
}

/** What one call does: succeed, or fail with a code (and message). */
export type FakeOutcome = "ok" | { readonly code: ProofErrorCode; readonly message?: string }

export interface FakeProverOptions {
  /** Time each proof takes on the `Clock` (default 100 ms); `TestClock.adjust` moves it along. */
  readonly duration?: Duration.DurationInput | ((call: FakeProverCall) => Duration.DurationInput)
  /** Outcomes by call index; calls past the end follow the other rules. */
  readonly script?: ReadonlyArray<FakeOutcome>
  /** A failure for particular inputs, e.g. `({ inputs }) => inputs.a === "13" ? { code: "internal" } : undefined`. */
  readonly failWhen?: (call: FakeProverCall) => Exclude<FakeOutcome, "ok"> | undefined
  /** Emulate the real circuits' constraints: multiplier a or b = 1, range value outside [min, max]. Default true. */
  readonly constraints?: boolean
  /** Reported as `Prover.capacity` (default 4). */
  readonly capacity?: number
}

const R = BigInt(FAKE_CIRCUIT_SPECS[0]!.field_modulus)

/** FNV-1a 64: a stable digest binding a fake proof to its circuit and public signals. */
const digest = (text: string) => {
  let h = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) h = ((h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn
  return h.toString(16).padStart(16, "0")
}
const seal = (circuit: string, signals: ReadonlyArray<string>) => digest(`${circuit}|${signals.join(",")}`)

const constraintFailure = (circuit: string, inputs: CircuitInputs): string | undefined => {
  const n = (name: string) => BigInt(String(inputs[name] ?? "0"))
  if (circuit === "multiplier" && (inputs.a === "1" || inputs.b === "1")) return "Assert Failed. Error in template NotOne_0 line: 15"
  if (circuit === "range" && (n("value") < n("min") || n("value") > n("max"))) return "Assert Failed. Error in template Range_5 line: 27"
  return undefined
}

const publicSignals = (circuit: string, inputs: CircuitInputs): ReadonlyArray<string> => {
  const spec = FAKE_CIRCUIT_SPECS.find((s) => s.circuit === circuit)!
  return spec.public_signals.map((name) => {
    if (circuit === "multiplier" && name === "c") return ((BigInt(String(inputs.a)) * BigInt(String(inputs.b))) % R).toString()
    return String(inputs[name] ?? "0")
  })
}

/** Every `prove` call the fake prover received, in order. */
export class FakeProverCalls extends Context.Tag("@mzk/testkit/FakeProverCalls")<FakeProverCalls, Effect.Effect<ReadonlyArray<FakeProverCall>>>() {}

/**
 * A deterministic `Prover` without cryptography: proofs take `duration` on the `Clock`, public
 * signals are what the real circuits would emit (multiplier's `c = a·b mod r`, the public inputs
 * of the others), and `verify` accepts exactly the proofs it made for those public signals, so a
 * changed signal fails as it would with snarkjs. Failures are scripted per call or per input.
 */
export const FakeProver = (options: FakeProverOptions = {}): Layer.Layer<Prover | FakeProverCalls> =>
  Layer.effectContext(Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<FakeProverCall>>([])
    const emulate = options.constraints ?? true

    const prove = (circuit: string, inputs: CircuitInputs): Effect.Effect<ProverOutput, ProverFailure> =>
      Effect.gen(function*() {
        const all = yield* Ref.getAndUpdate(calls, (list) => [...list, { index: list.length, circuit, inputs }])
        const call: FakeProverCall = { index: all.length, circuit, inputs }
        const duration = typeof options.duration === "function" ? options.duration(call) : options.duration ?? "100 millis"
        yield* Effect.sleep(duration)
        if (!FAKE_CIRCUIT_SPECS.some((s) => s.circuit === circuit)) {
          return yield* new ProverFailure({ code: "invalid_inputs", message: `Unknown circuit ${JSON.stringify(circuit)}` })
        }
        const scripted = Option.fromNullable(options.script?.[call.index]).pipe(
          Option.orElse(() => Option.fromNullable(options.failWhen?.(call)))
        )
        if (Option.isSome(scripted) && scripted.value !== "ok") {
          const { code, message } = scripted.value
          return yield* new ProverFailure({ code, message: message ?? `Scripted ${code}` })
        }
        const violated = emulate && Option.isNone(scripted) ? constraintFailure(circuit, inputs) : undefined
        if (violated !== undefined) return yield* new ProverFailure({ code: "constraint_violation", message: violated })
        const signals = publicSignals(circuit, inputs)
        const sealed = seal(circuit, signals)
        return {
          proof: { pi_a: [sealed, "0", "1"], pi_b: [["0", "0"], ["0", "0"], ["1", "0"]], pi_c: ["0", "0", "1"], protocol: "groth16", curve: "bn128", fake: true },
          public_signals: signals
        }
      })

    const verify = (circuit: string, proof: Groth16Proof, signals: ReadonlyArray<string>) =>
      Effect.sync(() => proof.pi_a[0] === seal(circuit, signals))

    return Context.make(Prover, { capacity: options.capacity ?? 4, prove, verify }).pipe(
      Context.add(FakeProverCalls, Ref.get(calls))
    )
  }))
