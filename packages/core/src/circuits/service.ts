import { Context, type Effect, type Option } from "effect"
import type {
  CircuitInUse,
  CircuitLimitReached,
  CircuitNameTaken,
  CircuitNotFound,
  CompilationLimitReached,
  InvalidRequest,
  StorageError
} from "../kernel/errors.js"
import type { AccountId, CircuitId } from "../kernel/ids.js"
import type { Circuit } from "./circuit.js"
import type { BuildInput } from "./compiler.js"

/** An upload, decoded at the boundary (HTTP multipart, the CLI's files). */
export interface CreateCircuitInput {
  /** Already checked against `CircuitName`. */
  readonly name: string
  readonly description?: string
  readonly source: BuildInput
}

/**
 * The circuits an account can see (the built-in ones and its own) and its uploads. An upload is
 * stored (sources content-addressed in `ArtifactsRepo`) as a `compiling` circuit and built by the
 * build loop (`CircuitBuilds`), which fires `circuit.ready` or `circuit.failed`.
 */
export class Circuits extends Context.Tag("@mzk/core/Circuits")<Circuits, {
  readonly create: (
    accountId: AccountId,
    input: CreateCircuitInput
  ) => Effect.Effect<Circuit, InvalidRequest | CircuitNameTaken | CircuitLimitReached | CompilationLimitReached | StorageError>
  /** The built-in circuits, then the account's live ones in creation order. */
  readonly list: (accountId: AccountId) => Effect.Effect<ReadonlyArray<Circuit>, StorageError>
  /** A circuit the account can see by name: a built-in one, or its own live one. */
  readonly get: (accountId: AccountId, name: string) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /** The circuit a proof was made with: built-in by name when `id` is null, else by id (removed ones too). */
  readonly forProof: (id: CircuitId | null, name: string) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /** Removes the account's circuit; built-in circuits and circuits with queued or running proofs are refused. */
  readonly remove: (accountId: AccountId, name: string) => Effect.Effect<void, CircuitNotFound | CircuitInUse | StorageError>
}>() {}

/** The circuits `@mzk/circuits` ships, as records of owner `builtin`, visible to every account. */
export class BuiltinCircuits extends Context.Tag("@mzk/core/BuiltinCircuits")<BuiltinCircuits, {
  readonly list: ReadonlyArray<Circuit>
  readonly get: (name: string) => Option.Option<Circuit>
}>() {}
