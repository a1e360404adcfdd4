import { Context, Effect, Either, Layer, Option } from "effect"
import {
  CircuitInUse,
  CircuitLimitReached,
  CircuitNameTaken,
  CircuitNotFound,
  CompilationLimitReached,
  type InvalidRequest,
  SetupUnavailable,
  type StorageError
} from "../kernel/errors.js"
import { invalidRequest } from "../kernel/decode.js"
import { type AccountId, type CircuitId, Ids } from "../kernel/ids.js"
import { type Metadata, metadataOf } from "../kernel/metadata.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import { AuditLog } from "../audit/service.js"
import { BN128_FIELD_MODULUS, type Circuit, type StoredCircuit, toCircuit } from "./circuit.js"
import { HEAD_BYTES } from "./artifactStreams.js"
import { CircuitCompiler, SETUP_SYSTEMS, type SetupSystem } from "./compiler.js"
import { zkeyProofSystem } from "./zkeyHeader.js"
import { CircuitsConfig } from "./config.js"
import { ArtifactsRepo, type CircuitInsertRefusal, CircuitsRepo } from "./repo.js"
import { checkBuildInput, decodeUploadFields, storeSource, type UploadSource } from "./upload.js"
import { CircuitBuildWakeup } from "./wakeup.js"

/** An upload, decoded at the boundary (HTTP multipart, the CLI's files). */
export interface CreateCircuitInput {
  /** Already checked against `CircuitName`. */
  readonly name: string
  readonly description?: string
  /** The application's own pairs (checked here against `MetadataInput`, whoever decoded the upload). */
  readonly metadata?: Metadata
  readonly source: UploadSource
  /**
   * The system to set up circom sources for (default groth16); for a prebuilt upload, the system
   * its zkey must be of (default: whatever its header says).
   */
  readonly proving_system?: ProvingSystem
}

/**
 * The system an upload is set up for, and its source carrying what the build must know: refuses
 * `ultra_honk` (circom and snarkjs zkeys are not proven with it) and a prebuilt zkey whose header
 * names another system than the one asked for, naming the field.
 */
const uploadSystem = (input: CreateCircuitInput): Effect.Effect<{ readonly system: ProvingSystem; readonly source: UploadSource }, InvalidRequest> => {
  const asked = input.proving_system
  if (input.source.kind === "noir" || input.source.kind === "noir_program") {
    // A Noir program is proven with UltraHonk and nothing else here.
    return asked === undefined || asked === "ultra_honk"
      ? Effect.succeed({ system: "ultra_honk", source: input.source })
      : Effect.fail(invalidRequest([{
        path: "proving_system",
        message: `a Noir program is proven with ultra_honk, not ${asked}; send ultra_honk or leave proving_system out`
      }]))
  }
  if (asked !== undefined && !(SETUP_SYSTEMS as ReadonlyArray<string>).includes(asked)) {
    return Effect.fail(invalidRequest([{
      path: "proving_system",
      message: `${asked} proves Noir programs; circom sources and snarkjs zkeys are set up for ${SETUP_SYSTEMS.join(", ")}`
    }]))
  }
  const explicit = asked as SetupSystem | undefined
  if (input.source.kind === "circom") {
    const system = explicit ?? "groth16"
    return Effect.succeed({ system, source: { ...input.source, proving_system: system } })
  }
  const zkey = input.source.zkey
  const head = zkey instanceof Uint8Array ? zkey.subarray(0, HEAD_BYTES) : zkey.head
  const found = head === undefined ? "short" : zkeyProofSystem(head)
  const detected = found === "short" || found === "unknown" ? undefined : found
  if (explicit !== undefined && detected !== undefined && detected !== explicit) {
    return Effect.fail(invalidRequest([{
      path: "proving_system",
      message: `the zkey is set up for ${detected}, not ${explicit}: send proving_system ${detected}, or a zkey set up for ${explicit}`
    }]))
  }
  return Effect.succeed({
    // A zkey whose header could not be read is refused by the build; until then the record says groth16.
    system: explicit ?? detected ?? "groth16",
    source: explicit === undefined ? input.source : { ...input.source, proving_system: explicit }
  })
}

/** Why a Noir upload is refused by a compiler that says nothing of Noir (one made before it could prove them). */
const NO_NOIR_CRS_MESSAGE = "This server cannot prove Noir programs: it has no UltraHonk CRS (--noir-crs DIR); nothing was stored"

/** The circuits `@mzk/circuits` ships, as records of owner `builtin`, visible to every account. */
export class BuiltinCircuits extends Context.Tag("@mzk/core/BuiltinCircuits")<BuiltinCircuits, {
  readonly list: ReadonlyArray<Circuit>
  /** A built-in circuit by name, as its default system (`proving_system`) proves it. */
  readonly get: (name: string) => Option.Option<Circuit>
  /**
   * The circuit as `system` proves it: its artifacts and verification key for that system; none
   * when it has no key for it (not among its `proving_systems`).
   */
  readonly forSystem: (name: string, system: ProvingSystem) => Option.Option<Circuit>
}>() {
  static readonly fromCircuits = (circuits: ReadonlyArray<Circuit>): Layer.Layer<BuiltinCircuits> => {
    const byName = new Map(circuits.map((circuit) => [circuit.name, circuit]))
    const get = (name: string) => Option.fromNullable(byName.get(name))
    return Layer.succeed(this, {
      list: circuits,
      get,
      forSystem: (name, system) => Option.filter(get(name), (circuit) => circuit.proving_system === system)
    })
  }
}

/** An account's circuit as `system` proves it: itself, when it is set up for that system. */
const ownForSystem = (circuit: Circuit, system: ProvingSystem): Option.Option<Circuit> =>
  circuit.proving_system === system ? Option.some(circuit) : Option.none()

/** Why the store refused an insert, as the error the caller gets, naming the limit. */
const refusalError = (
  refusal: CircuitInsertRefusal,
  name: string,
  limits: { readonly maxCircuits: number; readonly maxCompiling: number }
) => {
  switch (refusal) {
    case "name_taken":
      return new CircuitNameTaken({
        message: `This account already has a circuit named ${JSON.stringify(name)} (compiling or ready); remove it first or choose another name`
      })
    case "circuit_limit":
      return new CircuitLimitReached({
        message: `An account may hold at most ${limits.maxCircuits} circuits (the circuits-per-account limit); remove one first`
      })
    case "compilation_limit":
      return new CompilationLimitReached({
        message: `An account may have at most ${limits.maxCompiling} circuits compiling at once (the concurrent-compilations limit); wait for one to finish`
      })
  }
}

/**
 * The circuits an account can see (the built-in ones and its own) and its uploads. An upload is
 * stored (sources content-addressed in `ArtifactsRepo`) as a `compiling` circuit and built by the
 * build loop (`CircuitBuilds`), which fires `circuit.ready` or `circuit.failed`.
 */
export class Circuits extends Context.Tag("@mzk/core/Circuits")<Circuits, {
  /**
   * Stores an upload as a `compiling` circuit, replacing a `failed` one of the same name. Circom
   * sources are refused (`SetupUnavailable`) where the compiler has no setup for them.
   */
  readonly create: (
    accountId: AccountId,
    input: CreateCircuitInput
  ) => Effect.Effect<
    Circuit,
    InvalidRequest | SetupUnavailable | CircuitNameTaken | CircuitLimitReached | CompilationLimitReached | StorageError
  >
  /** The built-in circuits, then the account's live ones in creation order. */
  readonly list: (accountId: AccountId) => Effect.Effect<ReadonlyArray<Circuit>, StorageError>
  /** A circuit the account can see by name: a built-in one, or its own live one. */
  readonly get: (accountId: AccountId, name: string) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /**
   * The circuit a proof was made with, as its system proves it: built-in by name when `id` is null,
   * else by id (removed ones too).
   */
  readonly forProof: (id: CircuitId | null, name: string, system: ProvingSystem) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /**
   * Writes an uploaded file to artifact storage as it arrives, for `create` to publish: the
   * boundary streams large parts here rather than holding them (see `ArtifactsRepo.stage`).
   */
  readonly stageUpload: ArtifactsRepo["Type"]["stage"]
  /** A circuit as `system` proves it (a built-in one's key for that system); none when it has no key for it. */
  readonly asSystem: (circuit: Circuit, system: ProvingSystem) => Option.Option<Circuit>
  /** Removes the account's circuit; built-in circuits and circuits with queued or running proofs are refused. */
  readonly remove: (accountId: AccountId, name: string) => Effect.Effect<void, CircuitNotFound | CircuitInUse | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const tx = yield* Transactor
      const audit = yield* AuditLog
      const repo = yield* CircuitsRepo
      const artifacts = yield* ArtifactsRepo
      const builtins = yield* BuiltinCircuits
      const wakeup = yield* CircuitBuildWakeup
      const compiler = yield* CircuitCompiler
      const ids = yield* Ids
      // Read once, as the loops read theirs: the composition root sets it where it builds the layer.
      const config = yield* CircuitsConfig
      const limits = { maxCircuits: config.maxCircuitsPerAccount, maxCompiling: config.maxCompilingPerAccount }

      const builtinTaken = (name: string) =>
        new CircuitNameTaken({ message: `${JSON.stringify(name)} is the name of a built-in circuit; choose another name` })

      const create = (accountId: AccountId, input: CreateCircuitInput) =>
        Effect.gen(function*() {
          const fields = yield* decodeUploadFields({
            name: input.name,
            ...(input.description === undefined ? {} : { description: input.description }),
            ...(input.metadata === undefined ? {} : { metadata: input.metadata })
          })
          yield* checkBuildInput(input.source)
          const { source, system } = yield* uploadSystem(input)
          // Known now, not when it is built: a server that cannot set sources up refuses them before
          // storing anything, and the record says from the start what kind of setup it gets.
          const setup = compiler.sourceSetup
          if (input.source.kind === "circom" && !setup.available) return yield* new SetupUnavailable({ message: setup.message })
          const noir = input.source.kind === "noir" || input.source.kind === "noir_program"
          const noirSetup = compiler.noirSetup ?? { available: false, message: NO_NOIR_CRS_MESSAGE }
          if (noir && !noirSetup.available) return yield* new SetupUnavailable({ message: noirSetup.message })
          const developmentOnly = noir
            ? noirSetup.available && noirSetup.developmentOnly
            : input.source.kind === "circom" && setup.available && setup.developmentOnly
          if (Option.isSome(builtins.get(fields.name))) return yield* builtinTaken(fields.name)
          // Checked again atomically by the insert; this only spares storing an upload bound to be refused.
          const existing = yield* repo.getByName(accountId, fields.name)
          if (Option.isSome(existing) && existing.value.status !== "failed") return yield* refusalError("name_taken", fields.name, limits)
          const id = yield* ids.make("circuit")
          const at = yield* now
          // The upload's artifacts and the row commit together: a refused upload leaves nothing stored.
          const stored = yield* tx.transaction(Effect.gen(function*() {
            const record: StoredCircuit = {
              id,
              name: fields.name,
              owner: accountId,
              status: "compiling",
              error: null,
              description: fields.description ?? null,
              constraints: null,
              inputs: [],
              public_signals: [],
              verification_key: null,
              proving_system: system,
              proving_systems: [system],
              development_only: developmentOnly,
              field_modulus: BN128_FIELD_MODULUS,
              artifacts: null,
              created_at: at,
              updated_at: at,
              metadata: metadataOf(fields.metadata),
              source: yield* storeSource(artifacts, source),
              lease_expires_at: null,
              attempts: 0
            }
            const inserted = yield* repo.insert(record, limits)
            if (Either.isLeft(inserted)) return yield* refusalError(inserted.left, fields.name, limits)
            // A failed circuit's name is taken by the upload that corrects it: the failed one is removed.
            const { replaced } = inserted.right
            if (replaced !== null) {
              yield* audit.record(accountId, "circuit.removed", { type: "circuit", id: replaced, name: fields.name }, [
                { field: "replaced_by", from: null, to: id }
              ])
            }
            yield* audit.record(accountId, "circuit.created", { type: "circuit", id, name: fields.name })
            yield* tx.afterCommit(wakeup.notify)
            return record
          }))
          return toCircuit(stored)
        })

      const list = (accountId: AccountId) =>
        Effect.gen(function*() {
          const own: Array<Circuit> = []
          let after: string | undefined
          for (;;) {
            const page = yield* repo.list(accountId, after === undefined ? { limit: 100 } : { limit: 100, startingAfter: after })
            own.push(...page.items.map(toCircuit))
            if (!page.has_more || page.items.length === 0) break
            after = page.items[page.items.length - 1]!.id
          }
          return [...builtins.list, ...own]
        })

      const get = (accountId: AccountId, name: string) => {
        const builtin = builtins.get(name)
        return Option.isSome(builtin) ? Effect.succeed(builtin) : Effect.map(repo.getByName(accountId, name), Option.map(toCircuit))
      }

      const forProof = (id: CircuitId | null, name: string, system: ProvingSystem) =>
        id === null
          ? Effect.succeed(builtins.forSystem(name, system))
          : Effect.map(repo.getById(id), (found) => Option.flatMap(Option.map(found, toCircuit), (circuit) => ownForSystem(circuit, system)))

      const remove = (accountId: AccountId, name: string) =>
        Effect.gen(function*() {
          if (Option.isSome(builtins.get(name))) {
            return yield* new CircuitInUse({ message: `${JSON.stringify(name)} is a built-in circuit; built-in circuits cannot be removed` })
          }
          const outcome = yield* tx.transaction(Effect.tap(repo.remove(accountId, name, yield* now), (outcome) =>
            typeof outcome === "object" ? audit.record(accountId, "circuit.removed", { type: "circuit", id: outcome.removed, name }) : Effect.void))
          if (outcome === "not_found") return yield* new CircuitNotFound({ message: `No circuit ${JSON.stringify(name)} in this account` })
          if (outcome === "in_use") {
            return yield* new CircuitInUse({
              message: `Circuit ${JSON.stringify(name)} has queued or running proofs; remove it once they have finished`
            })
          }
        })

      const asSystem = (circuit: Circuit, system: ProvingSystem) =>
        circuit.owner === "builtin" ? builtins.forSystem(circuit.name, system) : ownForSystem(circuit, system)

      return { create, list, get, forProof, asSystem, remove, stageUpload: artifacts.stage }
    })
  )
}
