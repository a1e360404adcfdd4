import {
  type BuildInput,
  buildFileSize,
  BuildFailure,
  type BuildOutput,
  type CircuitErrorCode,
  type CircuitInput,
  CircuitCompiler,
  type SourceSetup
} from "@mzk/core"
import { Context, Duration, Effect, Layer, Ref } from "effect"

/**
 * What the fake compiler reads from a circom-looking main file (or a prebuilt upload's `sym`), one
 * statement per line:
 *
 * ```circom
 * signal input a;                      // private unless named in main's public list
 * signal input x[2][3];                // dimensions, outermost first
 * signal output c;
 * component main {public [x]} = T();  // required; its public list makes inputs public
 * // fake:constraints 12               // optional, default: one per signal
 * // fake:duration 5000                // the build takes this many ms on the Clock
 * // fake:fail compile_timeout too slow // the build fails with this code and message (and this line)
 * ```
 *
 * Anything else is ignored, except an `include` leaving the upload (`../`, an absolute path),
 * which fails as `include_outside_upload` like the real compiler.
 */
interface Declaration {
  readonly inputs: ReadonlyArray<CircuitInput>
  readonly outputs: ReadonlyArray<{ readonly name: string; readonly dimensions: ReadonlyArray<number> }>
  readonly constraints: number
  readonly durationMs: number
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const bytesOf = (value: string) => new TextEncoder().encode(value)

const SIGNAL = /^\s*signal\s+(input|output)\s+([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)\s*;/
const MAIN = /^\s*component\s+main\s*(?:\{\s*public\s*\[([^\]]*)\]\s*\})?\s*=/
const INCLUDE = /^\s*include\s+"([^"]*)"/
const FAKE = /^\s*\/\/\s*fake:(\w+)\s*(.*)$/

const dimensionsOf = (suffix: string) => [...suffix.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]))

const parse = (file: string, source: string): Declaration | BuildFailure => {
  const lines = source.split("\n")
  const signals: Array<{ kind: string; name: string; dimensions: Array<number> }> = []
  let publicNames: ReadonlyArray<string> | undefined
  let constraints: number | undefined
  let durationMs = 0
  for (const [i, line] of lines.entries()) {
    const at = { file, line: i + 1 }
    const include = INCLUDE.exec(line)
    if (include !== null && (include[1]!.startsWith("/") || include[1]!.split("/").includes(".."))) {
      return new BuildFailure({ code: "include_outside_upload", message: `include "${include[1]}" leaves the upload`, ...at })
    }
    const fake = FAKE.exec(line)
    if (fake !== null) {
      const [, directive, rest] = fake as unknown as [string, string, string]
      if (directive === "constraints") constraints = Number(rest)
      if (directive === "duration") durationMs = Number(rest)
      if (directive === "fail") {
        const [code, ...message] = rest.split(" ")
        return new BuildFailure({ code: code as CircuitErrorCode, message: message.join(" ") || `Scripted ${code}`, ...at })
      }
      continue
    }
    const signal = SIGNAL.exec(line)
    if (signal !== null) signals.push({ kind: signal[1]!, name: signal[2]!, dimensions: dimensionsOf(signal[3]!) })
    const main = MAIN.exec(line)
    if (main !== null) publicNames = (main[1] ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
  }
  if (publicNames === undefined) return new BuildFailure({ code: "compile_error", message: "No main component was found in the project", file })
  const isPublic = new Set(publicNames)
  return {
    inputs: signals.filter((s) => s.kind === "input").map((s) => ({
      name: s.name,
      visibility: isPublic.has(s.name) ? "public" : "private",
      kind: "field",
      dimensions: s.dimensions
    })),
    outputs: signals.filter((s) => s.kind === "output").map((s) => ({ name: s.name, dimensions: s.dimensions })),
    constraints: constraints ?? signals.length,
    durationMs
  }
}

/** `x` with dimensions [2, 1] → `x[0][0]`, `x[1][0]`: how public signals name array elements. */
const elementNames = (name: string, dimensions: ReadonlyArray<number>): Array<string> =>
  dimensions.length === 0
    ? [name]
    : Array.from({ length: dimensions[0]! }, (_, i) => elementNames(`${name}[${i}]`, dimensions.slice(1))).flat()

export interface FakeCompilerCall {
  readonly index: number
  readonly input: BuildInput
}

/** Every `build` call the fake compiler received, in order. */
export class FakeCompilerCalls extends Context.Tag("@mzk/testkit/FakeCompilerCalls")<
  FakeCompilerCalls,
  Effect.Effect<ReadonlyArray<FakeCompilerCall>>
>() {}

export interface FakeCompilerOptions {
  /** Time each build takes on the `Clock` besides its `// fake:duration` (default 100 ms). */
  readonly duration?: Duration.DurationInput
  /** A failure for particular calls, e.g. the first one. */
  readonly failWhen?: (call: FakeCompilerCall) => BuildFailure | undefined
  /**
   * The setup circom sources get, as a server's powers of tau decides it (default: available, not
   * development-only); `{ available: false, message }` plays a server without one.
   */
  readonly setup?: SourceSetup
}

/**
 * A deterministic `CircuitCompiler` without circom or snarkjs: it reads the signals of the main
 * file (see `Declaration` for the format), takes its time on the `Clock`, and returns fake
 * artifacts, so tests drive uploads to `ready` or `failed` without cryptography.
 */
export const FakeCompiler = (options: FakeCompilerOptions = {}): Layer.Layer<CircuitCompiler | FakeCompilerCalls> =>
  Layer.effectContext(Effect.gen(function*() {
    const calls = yield* Ref.make<ReadonlyArray<FakeCompilerCall>>([])
    const sourceSetup = options.setup ?? { available: true, developmentOnly: false }

    const build = (input: BuildInput): Effect.Effect<BuildOutput, BuildFailure> =>
      Effect.gen(function*() {
        const all = yield* Ref.getAndUpdate(calls, (list) => [...list, { index: list.length, input }])
        const call: FakeCompilerCall = { index: all.length, input }
        // The fake builds circom-shaped uploads only; a Noir upload is the real compiler's to build.
        if (input.kind === "noir" || input.kind === "noir_program") {
          return yield* new BuildFailure({ code: "internal", message: "the fake compiler does not build Noir programs" })
        }
        const file = input.kind === "circom" ? input.main : "sym"
        const source = text(input.kind === "circom" ? input.files[input.main]! : input.sym)
        const declared = parse(file, source)
        yield* Effect.sleep(Duration.sum(options.duration ?? "100 millis", declared instanceof BuildFailure ? 0 : declared.durationMs))
        const scripted = options.failWhen?.(call)
        if (scripted !== undefined) return yield* scripted
        if (declared instanceof BuildFailure) return yield* declared
        if (input.kind === "artifacts" && buildFileSize(input.zkey) === 0) {
          return yield* new BuildFailure({ code: "invalid_artifacts", message: "The zkey is empty, not a Groth16 bn128 zkey" })
        }
        const publicInputs = declared.inputs.filter((i) => i.visibility === "public")
        const public_signals = [
          ...declared.outputs.flatMap((o) => elementNames(o.name, o.dimensions)),
          ...publicInputs.flatMap((i) => elementNames(i.name, i.dimensions))
        ]
        return {
          wasm: input.kind === "artifacts" ? input.wasm : bytesOf(`fake-wasm\n${source}`),
          zkey: input.kind === "artifacts" ? input.zkey : bytesOf(`fake-zkey\n${source}`),
          r1cs: input.kind === "artifacts" ? input.r1cs : bytesOf(`fake-r1cs\n${source}`),
          sym: bytesOf(source),
          constraints: declared.constraints,
          inputs: declared.inputs,
          public_signals,
          verification_key: { protocol: input.proving_system ?? "groth16", curve: "bn128", nPublic: public_signals.length, fake: true },
          proving_system: input.proving_system ?? "groth16",
          development_only: input.kind === "circom" && sourceSetup.available && sourceSetup.developmentOnly
        } satisfies BuildOutput
      })

    const solidityVerifier = (verificationKey: unknown) =>
      Effect.succeed(`// SPDX-License-Identifier: GPL-3.0\n// A fake verifier for ${JSON.stringify(verificationKey)}\ncontract Groth16Verifier {}\n`)

    return Context.make(CircuitCompiler, { sourceSetup, build, solidityVerifier }).pipe(Context.add(FakeCompilerCalls, Ref.get(calls)))
  }))
