import { BuildFailure, CircuitErrorCode, CircuitInput, type SetupSystem } from "@mzk/core"
import { Either, ParseResult, Schema } from "effect"
import type { PtauProgress } from "./ptauProgress.js"

/**
 * What a build child may say over IPC, decoded before anything is done with it. The child runs
 * compilers over a tenant's upload; whatever it sends (a code this process does not know, a line
 * that is not an integer, a field of the wrong type, garbage) must fail that one build, never throw
 * in an event handler of the server, where nothing catches it and the process would end.
 */

/**
 * The one job the parent sends a build child (buildJob.mjs takes the first three kinds, noirJob.mjs
 * the last two).
 */
export type JobSpec =
  | {
    readonly kind: "circom"
    readonly main: string
    readonly ptau: string | null
    readonly developmentPtau: { power: number; dir: string } | null
    /** Set up natively from fresh toxic waste (development only), not against a ptau. */
    readonly nativeSetup: boolean
    readonly system: SetupSystem
  }
  | { readonly kind: "artifacts"; readonly system: SetupSystem | null }
  | { readonly kind: "devptau"; readonly power: number; readonly dir: string }
  | { readonly kind: "noir"; readonly files: Readonly<Record<string, Uint8Array>> }
  | { readonly kind: "acir"; readonly bytes: Uint8Array }

/** The job kinds and what each answers on success. */
export type JobKind = JobSpec["kind"]

const Files = Schema.Struct({ wasm: Schema.String, zkey: Schema.String, r1cs: Schema.String, sym: Schema.String })

/** buildJob.mjs's answer to a circom or artifacts job. */
const BuildSuccess = Schema.Struct({
  ok: Schema.Literal(true),
  files: Schema.optionalWith(Files, { exact: true }),
  constraints: Schema.NonNegativeInt,
  inputs: Schema.Array(CircuitInput),
  public_signals: Schema.Array(Schema.String),
  verification_key: Schema.Unknown,
  proving_system: Schema.optionalWith(Schema.Literal("groth16", "plonk", "fflonk"), { exact: true }),
  development_only: Schema.Boolean
})
export type BuildSuccess = typeof BuildSuccess.Type

/** buildJob.mjs's answer to a devptau job: the file it made (or found). */
const PtauSuccess = Schema.Struct({ ok: Schema.Literal(true), file: Schema.String })

/**
 * noirJob.mjs's answer: the compiled (or parsed) program, as JSON text; its ABI is read, with its
 * own errors, after.
 */
const NoirSuccess = Schema.Struct({
  ok: Schema.Literal(true),
  program: Schema.parseJson(Schema.Struct({
    noir_version: Schema.String,
    hash: Schema.optionalWith(Schema.Union(Schema.Number, Schema.String), { exact: true }),
    // Read with its own errors (`readNoirAbi`): a prebuilt program's ABI is the uploader's.
    abi: Schema.Unknown,
    bytecode: Schema.String
  }))
})
export type NoirSuccess = typeof NoirSuccess.Type

const SUCCESS = { circom: BuildSuccess, artifacts: BuildSuccess, devptau: PtauSuccess, noir: NoirSuccess, acir: NoirSuccess } as const
export type JobSuccess<K extends JobKind> = Schema.Schema.Type<(typeof SUCCESS)[K]>

/**
 * A failure the child reports. The Noir engine also says `invalid_upload` (what is wrong with the
 * files themselves), which is the tenant's `compile_error` for sources and `invalid_artifacts` for a
 * prebuilt program.
 */
const Failure = Schema.Struct({
  ok: Schema.Literal(false),
  code: Schema.Union(CircuitErrorCode, Schema.Literal("invalid_upload")),
  message: Schema.String,
  file: Schema.optional(Schema.String),
  line: Schema.optional(Schema.Int)
})

const Progress = Schema.Struct({
  progress: Schema.Union(
    Schema.Struct({ event: Schema.Literal("start"), power: Schema.Number, file: Schema.String, steps: Schema.Number }),
    Schema.Struct({
      event: Schema.Literal("step"),
      step: Schema.String,
      index: Schema.Number,
      of: Schema.Number,
      state: Schema.Literal("started", "finished")
    }),
    Schema.Struct({ event: Schema.Literal("done"), power: Schema.Number, file: Schema.String, bytes: Schema.Number })
  )
})

const isProgress = (message: unknown) => typeof message === "object" && message !== null && "progress" in message

/** One message of the child: progress to log, its answer, or something unreadable (`reason` is for the operator's log). */
export type ChildMessage<K extends JobKind> =
  | { readonly _tag: "progress"; readonly progress: PtauProgress }
  | { readonly _tag: "answer"; readonly answer: Either.Either<JobSuccess<K>, BuildFailure> }
  | { readonly _tag: "unreadable"; readonly what: string; readonly reason: string }

const unreadable = (what: string, error: ParseResult.ParseError) =>
  ({ _tag: "unreadable", what, reason: ParseResult.TreeFormatter.formatErrorSync(error) }) as const

/** Decodes one message of a `kind` job's child. Never throws. */
export const decodeChildMessage = <K extends JobKind>(kind: K, message: unknown): ChildMessage<K> => {
  if (isProgress(message)) {
    const progress = Schema.decodeUnknownEither(Progress)(message)
    return Either.isRight(progress) ? { _tag: "progress", progress: progress.right.progress } : unreadable("progress", progress.left)
  }
  if (typeof message === "object" && message !== null && (message as { ok?: unknown }).ok === true) {
    const success = Schema.decodeUnknownEither(SUCCESS[kind] as unknown as Schema.Schema<JobSuccess<K>>)(message)
    return Either.isRight(success) ? { _tag: "answer", answer: Either.right(success.right) } : unreadable(`${kind} result`, success.left)
  }
  const failure = Schema.decodeUnknownEither(Failure)(message)
  if (Either.isLeft(failure)) return unreadable("failure", failure.left)
  const { code, message: text, file, line } = failure.right
  const tenantCode = code !== "invalid_upload" ? code : kind === "acir" ? "invalid_artifacts" : "compile_error"
  return {
    _tag: "answer",
    answer: Either.left(
      new BuildFailure({ code: tenantCode, message: text, ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}) })
    )
  }
}
