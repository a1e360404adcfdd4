import {
  BN128_FIELD_MODULUS,
  type Circuit,
  type CircuitInputs,
  type CircuitInputValue,
  type SnarkjsProof,
  Prover,
  ProverFailure,
  type ProofErrorCode,
  type ProverOutput
} from "@mzk/core"
import { Context, Duration, Effect, Layer, Option, Ref } from "effect"
import { FAKE_BUILTIN_CIRCUITS } from "./fakeCatalog.js"

export interface FakeProverCall {
  /** 0 for the first `prove` call of this prover, then counting up. */
  readonly index: number
  /** The circuit's name. */
  readonly circuit: string
  /** The circuit's id; null for a built-in one. */
  readonly circuit_id: string | null
  readonly inputs: CircuitInputs
}

/**
 * What one call does: succeed, succeed with a proof that does not verify (`invalid_proof`, as a
 * faulty prover or a zkey of another circuit would make), or fail with a code (and message).
 */
export type FakeOutcome = "ok" | "invalid_proof" | { readonly code: ProofErrorCode; readonly message?: string }

export interface FakeProverOptions {
  /** Time each proof takes on the `Clock` (default 100 ms); `TestClock.adjust` moves it along. */
  readonly duration?: Duration.DurationInput | ((call: FakeProverCall) => Duration.DurationInput)
  /** Outcomes by call index; calls past the end follow the other rules. */
  readonly script?: ReadonlyArray<FakeOutcome>
  /** A failure for particular inputs, e.g. `({ inputs }) => inputs.a === "13" ? { code: "internal" } : undefined`. */
  readonly failWhen?: (call: FakeProverCall) => Exclude<FakeOutcome, "ok" | "invalid_proof"> | undefined
  /** Emulate the real circuits' constraints: multiplier a or b = 1, range value outside [min, max]. Default true. */
  readonly constraints?: boolean
  /** Reported as `Prover.capacity` (default 4). */
  readonly capacity?: number
}

const R = BigInt(BN128_FIELD_MODULUS)
const BUILTIN_NAMES = new Set(FAKE_BUILTIN_CIRCUITS.map((c) => c.name))

/** FNV-1a 64: a stable digest binding a fake proof to its circuit and public signals. */
const digest = (text: string) => {
  let h = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) h = ((h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn
  return h.toString(16).padStart(16, "0")
}
/** Binds a proof to one circuit record (a reused name is another circuit) and its public signals. */
const seal = (circuit: Circuit, signals: ReadonlyArray<string>) => digest(`${circuit.id ?? "builtin"}:${circuit.name}|${signals.join(",")}`)

const constraintFailure = (circuit: string, inputs: CircuitInputs): string | undefined => {
  const n = (name: string) => BigInt(String(inputs[name] ?? "0"))
  if (circuit === "multiplier" && (inputs.a === "1" || inputs.b === "1")) return "Assert Failed. Error in template NotOne_0 line: 15"
  if (circuit === "range" && (n("value") < n("min") || n("value") > n("max"))) return "Assert Failed. Error in template Range_5 line: 27"
  return undefined
}

const flatten = (value: CircuitInputValue): Array<string> => (typeof value === "string" ? [value] : value.flatMap(flatten))

/** A public signal's value when it names an input or an input's element (`x`, `x[1][0]`). */
const inputValue = (inputs: CircuitInputs, signal: string): string | undefined => {
  const [, name, suffix] = /^([^[]+)((?:\[\d+\])*)$/.exec(signal) ?? []
  let value: CircuitInputValue | undefined = name === undefined ? undefined : inputs[name]
  for (const [, index] of (suffix ?? "").matchAll(/\[(\d+)\]/g)) {
    value = value === undefined || typeof value === "string" ? undefined : value[Number(index)]
  }
  return typeof value === "string" ? value : undefined
}

/**
 * The public signals the real circuits would emit (multiplier's `c = a·b mod r`, the public inputs
 * of the others); for an account's circuit, its public inputs as given and every output the sum
 * of all its inputs mod r.
 */
const publicSignals = (circuit: Circuit, inputs: CircuitInputs): ReadonlyArray<string> => {
  const sum = Object.values(inputs).flatMap(flatten).reduce((total, v) => (total + BigInt(v)) % R, 0n).toString()
  return circuit.public_signals.map((name) => {
    if (circuit.id === null && circuit.name === "multiplier" && name === "c") {
      return ((BigInt(String(inputs.a)) * BigInt(String(inputs.b))) % R).toString()
    }
    return inputValue(inputs, name) ?? (circuit.id === null ? "0" : sum)
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

    const prove = (circuit: Circuit, inputs: CircuitInputs): Effect.Effect<ProverOutput, ProverFailure> =>
      Effect.gen(function*() {
        const all = yield* Ref.getAndUpdate(calls, (list) => [...list, { index: list.length, circuit: circuit.name, circuit_id: circuit.id, inputs }])
        const call: FakeProverCall = { index: all.length, circuit: circuit.name, circuit_id: circuit.id, inputs }
        const duration = typeof options.duration === "function" ? options.duration(call) : options.duration ?? "100 millis"
        yield* Effect.sleep(duration)
        if (circuit.status !== "ready" || (circuit.id === null && !BUILTIN_NAMES.has(circuit.name))) {
          return yield* new ProverFailure({ code: "invalid_inputs", message: `Unknown circuit ${JSON.stringify(circuit.name)}` })
        }
        const scripted = Option.fromNullable(options.script?.[call.index]).pipe(
          Option.orElse(() => Option.fromNullable(options.failWhen?.(call)))
        )
        if (Option.isSome(scripted) && typeof scripted.value === "object") {
          const { code, message } = scripted.value
          return yield* new ProverFailure({ code, message: message ?? `Scripted ${code}` })
        }
        const violated = emulate && Option.isNone(scripted) && circuit.id === null ? constraintFailure(circuit.name, inputs) : undefined
        if (violated !== undefined) return yield* new ProverFailure({ code: "constraint_violation", message: violated })
        const signals = publicSignals(circuit, inputs)
        const sealed = Option.contains(scripted, "invalid_proof") ? seal(circuit, [...signals, "forged"]) : seal(circuit, signals)
        return {
          proof: { pi_a: [sealed, "0", "1"], pi_b: [["0", "0"], ["0", "0"], ["1", "0"]], pi_c: ["0", "0", "1"], protocol: "groth16", curve: "bn128", fake: true },
          public_signals: signals
        }
      })

    const verify = (circuit: Circuit, proof: SnarkjsProof, signals: ReadonlyArray<string>) =>
      Effect.sync(() => (proof["pi_a"] as ReadonlyArray<string> | undefined)?.[0] === seal(circuit, signals))

    return Context.make(Prover, { capacity: options.capacity ?? 4, prove, verify }).pipe(
      Context.add(FakeProverCalls, Ref.get(calls))
    )
  }))
