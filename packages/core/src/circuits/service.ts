import { Context, Effect, Either, Layer, Option, Stream } from "effect"
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
import { type PageOf, pageOf } from "../kernel/paging.js"
import { type Metadata, metadataOf } from "../kernel/metadata.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"
import { now } from "../kernel/time.js"
import { Transactor } from "../kernel/transaction.js"
import { AuditLog } from "../audit/service.js"
import {
  BN128_FIELD_MODULUS,
  type Circuit,
  type CircuitRef,
  type Digest,
  formatCircuitRef,
  type ListCircuitVersionsQuery,
  parseCircuitRef,
  type StoredCircuit,
  toCircuit
} from "./circuit.js"
import type { ArtifactBytes } from "./artifactBytes.js"
import { CircuitCompiler, SETUP_SYSTEMS, type SetupSystem } from "./compiler.js"
import { scanZkeySystem, zkeyProofSystem } from "./zkeyHeader.js"
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
  const found = zkey instanceof Uint8Array ? zkeyProofSystem(zkey) : zkey.zkeySystem ?? "short"
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

/** The circuits `@mzk/proving` ships, as records of owner `builtin`, visible to every account. */
export class BuiltinCircuits extends Context.Tag("@mzk/core/BuiltinCircuits")<BuiltinCircuits, {
  readonly list: ReadonlyArray<Circuit>
  /** A built-in circuit by name, as its default system (`proving_system`) proves it. */
  readonly get: (name: string) => Option.Option<Circuit>
  /**
   * The circuit as `system` proves it: its artifacts and verification key for that system; none
   * when it has no key for it (not among its `proving_systems`).
   */
  readonly forSystem: (name: string, system: ProvingSystem) => Option.Option<Circuit>
  /**
   * A built-in artifact's bytes by digest, for downloads (`ArtifactDownloads`); none for a digest
   * it does not ship. Absent where the catalogue has no files (a test's fake one).
   */
  readonly artifact?: (digest: Digest) => Option.Option<ArtifactBytes>
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
    case "circuit_limit":
      return new CircuitLimitReached({
        message: `An account may hold at most ${limits.maxCircuits} circuits, every live version counted (the circuits-per-account ` +
          `limit); remove one first (DELETE /circuits/${name}@N removes one version)`
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
   * Stores an upload as a `compiling` circuit: the next version of its name (1 for a new name),
   * replacing the name's newest version when that one `failed`. Circom sources are refused
   * (`SetupUnavailable`) where the compiler has no setup for them; built-in names (`CircuitNameTaken`).
   */
  readonly create: (
    accountId: AccountId,
    input: CreateCircuitInput
  ) => Effect.Effect<
    Circuit,
    InvalidRequest | SetupUnavailable | CircuitNameTaken | CircuitLimitReached | CompilationLimitReached | StorageError
  >
  /**
   * The built-in circuits, then the newest live version of each of the account's names, newest
   * first. A whole list, unpaged: the circuits-per-account limit bounds it.
   */
  readonly list: (accountId: AccountId) => Effect.Effect<ReadonlyArray<Circuit>, StorageError>
  /**
   * A circuit the account can see by reference (`parseCircuitRef`): a built-in one (`name` or
   * `name@1`), or its own live one, `name@N` exactly that version and `name` the newest whatever
   * its status (what a user who just uploaded it wants to see).
   */
  readonly get: (accountId: AccountId, ref: string) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /**
   * The circuit a proof request's `type` names: `name@N` exactly that version (ready or not; the
   * caller refuses one that is not), `name` the newest `ready` version, or when none is ready the
   * newest (not ready, so refused as such).
   */
  readonly forRequest: (accountId: AccountId, type: string) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /**
   * Every live version of one of the account's names, newest first, paged (a built-in name: its
   * one version). A name the account has no live version of (or a reference with `@N`) is refused.
   */
  readonly versions: (
    accountId: AccountId,
    name: string,
    query: ListCircuitVersionsQuery
  ) => Effect.Effect<PageOf<Circuit>, CircuitNotFound | InvalidRequest | StorageError>
  /**
   * The circuit a proof was made with, as its system proves it: built-in by name when `id` is null,
   * else by id (removed ones too).
   */
  readonly forProof: (id: CircuitId | null, name: string, system: ProvingSystem) => Effect.Effect<Option.Option<Circuit>, StorageError>
  /**
   * Writes an uploaded file to artifact storage as it arrives, for `create` to publish: the
   * boundary streams large parts here rather than holding them (see `ArtifactsRepo.stage`). The
   * bytes are scanned as they pass for a zkey's proof system (`zkeySystem`), which `create` checks
   * against the system the upload names.
   */
  readonly stageUpload: ArtifactsRepo["Type"]["stage"]
  /** A circuit as `system` proves it (a built-in one's key for that system); none when it has no key for it. */
  readonly asSystem: (circuit: Circuit, system: ProvingSystem) => Option.Option<Circuit>
  /**
   * Removes one version of the account's circuit (`name@N`), or every version of the name (`name`);
   * refused for built-in circuits, and while proofs of a version it would remove are queued or
   * running (then nothing is removed).
   */
  readonly remove: (accountId: AccountId, ref: string) => Effect.Effect<void, CircuitNotFound | CircuitInUse | StorageError>
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
          const id = yield* ids.make("circuit")
          const at = yield* now
          // The upload's artifacts and the row commit together: a refused upload leaves nothing stored.
          const stored = yield* tx.transaction(Effect.gen(function*() {
            const record: StoredCircuit = {
              id,
              name: fields.name,
              // Numbered by the insert, which alone sees every version the name had.
              version: 0,
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
            // A failed newest version is replaced by the upload that corrects it: the failed one is removed.
            const { replaced, version } = inserted.right
            if (replaced !== null) {
              yield* audit.record(accountId, "circuit.removed", { type: "circuit", id: replaced, name: fields.name }, [
                { field: "replaced_by", from: null, to: id }
              ])
            }
            yield* audit.record(accountId, "circuit.created", { type: "circuit", id, name: fields.name })
            yield* tx.afterCommit(wakeup.notify)
            return { ...record, version }
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

      /** A built-in circuit the reference names (`name` or `name@1`: built-in circuits have one version). */
      const builtinOf = (ref: CircuitRef) => (ref.version === null || ref.version === 1 ? builtins.get(ref.name) : Option.none())

      const get = (accountId: AccountId, reference: string) => {
        const ref = parseCircuitRef(reference)
        if (Option.isSome(builtins.get(ref.name))) return Effect.succeed(builtinOf(ref))
        return Effect.map(repo.getByName(accountId, ref.name, ref.version ?? "newest"), Option.map(toCircuit))
      }

      const forRequest = (accountId: AccountId, type: string) => {
        const ref = parseCircuitRef(type)
        if (Option.isSome(builtins.get(ref.name))) return Effect.succeed(builtinOf(ref))
        if (ref.version !== null) return Effect.map(repo.getByName(accountId, ref.name, ref.version), Option.map(toCircuit))
        return Effect.flatMap(repo.getByName(accountId, ref.name, "newest_ready"), (ready) =>
          Option.isSome(ready)
            ? Effect.succeed(Option.some(toCircuit(ready.value)))
            : Effect.map(repo.getByName(accountId, ref.name, "newest"), Option.map(toCircuit)))
      }

      const notFound = (ref: string) => new CircuitNotFound({ message: `No circuit ${JSON.stringify(ref)} in this account` })

      const versions = (accountId: AccountId, name: string, query: ListCircuitVersionsQuery) =>
        Effect.gen(function*() {
          const page = yield* pageOf(query)
          const ref = parseCircuitRef(name)
          if (ref.version !== null) {
            return yield* invalidRequest([{
              path: "name",
              message: `lists every version of a name: send ${JSON.stringify(ref.name)}, without @${ref.version}`
            }])
          }
          const builtin = builtins.get(name)
          if (Option.isSome(builtin)) {
            const first = page.startingAfter === undefined && page.endingBefore === undefined
            return { items: first ? [builtin.value] : [], total: 1, has_more: false }
          }
          const found = yield* repo.listVersions(accountId, name, page)
          // A name without a live version is unknown (a page past the last one is merely empty).
          if (found.total === 0) return yield* notFound(name)
          return { ...found, items: found.items.map(toCircuit) }
        })

      const forProof = (id: CircuitId | null, name: string, system: ProvingSystem) =>
        id === null
          ? Effect.succeed(builtins.forSystem(name, system))
          : Effect.map(repo.getById(id), (found) => Option.flatMap(Option.map(found, toCircuit), (circuit) => ownForSystem(circuit, system)))

      const remove = (accountId: AccountId, reference: string) =>
        Effect.gen(function*() {
          const ref = parseCircuitRef(reference)
          const { name } = ref
          if (Option.isSome(builtinOf(ref))) {
            return yield* new CircuitInUse({ message: `${JSON.stringify(name)} is a built-in circuit; built-in circuits cannot be removed` })
          }
          const outcome = yield* tx.transaction(Effect.tap(repo.remove(accountId, name, ref.version ?? "all", yield* now), (outcome) =>
            typeof outcome === "object"
              ? Effect.forEach(outcome.removed, ({ id }) => audit.record(accountId, "circuit.removed", { type: "circuit", id, name }), {
                discard: true
              })
              : Effect.void))
          if (outcome === "not_found") return yield* notFound(formatCircuitRef(ref))
          if (outcome === "in_use") {
            return yield* new CircuitInUse({
              message: ref.version === null
                ? `Circuit ${JSON.stringify(name)} has queued or running proofs of one of its versions; nothing was removed: ` +
                  `remove it once they have finished`
                : `Circuit ${JSON.stringify(formatCircuitRef(ref))} has queued or running proofs; remove it once they have finished`
            })
          }
        })

      const asSystem = (circuit: Circuit, system: ProvingSystem) =>
        circuit.owner === "builtin" ? builtins.forSystem(circuit.name, system) : ownForSystem(circuit, system)

      const stageUpload: ArtifactsRepo["Type"]["stage"] = (chunks) => {
        const scan = scanZkeySystem()
        return Effect.map(
          artifacts.stage(Stream.tap(chunks, (chunk) => Effect.sync(() => scan.push(chunk)))),
          (staged) => ({ ...staged, zkeySystem: scan.result() })
        )
      }

      return { create, list, get, forRequest, versions, forProof, asSystem, remove, stageUpload }
    })
  )
}
