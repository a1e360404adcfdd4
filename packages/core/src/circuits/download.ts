import { Context, Effect, Layer, Option, Schema } from "effect"
import { type ArtifactBytes, bytesInMemory } from "./artifactBytes.js"
import { CircuitNotFound, CircuitNotReady, type InvalidRequest, type StorageError } from "../kernel/errors.js"
import { invalidRequest } from "../kernel/decode.js"
import type { AccountId } from "../kernel/ids.js"
import type { ProvingSystem } from "../kernel/provingSystem.js"
import { type Circuit, type Digest, formatCircuitRef, parseCircuitRef } from "./circuit.js"
import { ArtifactsRepo } from "./repo.js"
import { BuiltinCircuits, Circuits } from "./service.js"

/**
 * What a client-side prover or verifier downloads of a circuit, named as the upload's parts are:
 * - `wasm`: circom's witness calculator (snarkjs `fullProve`'s first file)
 * - `zkey`: the proving key of the asked system (its second file)
 * - `verification_key`: the key as snarkjs exports it (`GET /circuits/{name}`'s `verification_key`)
 * - `r1cs`, `sym`: the constraint system and signal names, where the circuit has them (an upload
 *   of sources or one that sent them; built-in circuits have neither)
 * - `noir_program`: a Noir circuit's program JSON (ABI and bytecode, what bb.js proves from)
 */
export const ARTIFACT_KINDS = ["wasm", "zkey", "verification_key", "r1cs", "sym", "noir_program"] as const
export const ArtifactKind = Schema.Literal(...ARTIFACT_KINDS).annotations({ identifier: "ArtifactKind" })
export type ArtifactKind = typeof ArtifactKind.Type

/** One artifact of one circuit version, ready to be sent whole or in part. */
export interface ArtifactDownload {
  readonly circuit: string
  readonly version: number
  readonly kind: ArtifactKind
  readonly proving_system: ProvingSystem
  /** A file name that says what it is: `<name>@<version>[.<system>].<ext>`. */
  readonly filename: string
  /** `application/wasm`, `application/json` (the verification key, a Noir program) or `application/octet-stream`. */
  readonly content_type: string
  /**
   * The SHA-256 of the bytes, lowercase hex: stored artifacts are kept under it. Absent for the
   * verification key, which the circuit's record holds as JSON: whoever sends it hashes it.
   */
  readonly digest: Digest | null
  readonly bytes: ArtifactBytes
}

const EXTENSIONS: Record<ArtifactKind, string> = {
  wasm: "wasm",
  zkey: "zkey",
  verification_key: "vkey.json",
  r1cs: "r1cs",
  sym: "sym",
  noir_program: "json"
}

const CONTENT_TYPES: Record<ArtifactKind, string> = {
  wasm: "application/wasm",
  zkey: "application/octet-stream",
  verification_key: "application/json",
  r1cs: "application/octet-stream",
  sym: "application/octet-stream",
  noir_program: "application/json"
}

/**
 * Which artifact of a ready circuit (as `system` proves it) a kind names: its digest, the key's
 * JSON, or none where the circuit has no such file. A Noir circuit's stored `wasm` is its program
 * and its `zkey` its UltraHonk key's bytes (see `CircuitArtifacts`), so they are offered under
 * their own names only.
 */
const artifactOf = (circuit: Circuit, kind: ArtifactKind): Option.Option<Digest | { readonly json: unknown }> => {
  const artifacts = circuit.artifacts
  if (artifacts === null) return Option.none()
  const noir = circuit.proving_system === "ultra_honk"
  switch (kind) {
    case "wasm":
      return noir ? Option.none() : Option.some(artifacts.wasm)
    case "zkey":
      return noir ? Option.none() : Option.some(artifacts.zkey)
    case "noir_program":
      return noir ? Option.some(artifacts.wasm) : Option.none()
    case "r1cs":
      return Option.fromNullable(artifacts.r1cs)
    case "sym":
      return Option.fromNullable(artifacts.sym)
    case "verification_key":
      return circuit.verification_key === null ? Option.none() : Option.some({ json: circuit.verification_key })
  }
}

/** The kinds a ready circuit offers, for the message that refuses another. */
export const artifactKindsOf = (circuit: Circuit): ReadonlyArray<ArtifactKind> =>
  ARTIFACT_KINDS.filter((kind) => Option.isSome(artifactOf(circuit, kind)))

/**
 * A circuit's artifacts for download: the file a client-side prover or verifier needs, found by
 * the same reference rules as `GET /circuits/{name}` (`name` the newest version, `name@N` version
 * N, built-in circuits included), read from wherever the circuit's files live (the built-in
 * catalogue's files, or `ArtifactsRepo`).
 */
export class ArtifactDownloads extends Context.Tag("@mzk/core/ArtifactDownloads")<ArtifactDownloads, {
  /**
   * The `kind` artifact of the circuit `ref` names, as `system` proves it (default: the circuit's
   * own system): `CircuitNotFound`, `CircuitNotReady` (compiling or failed), or 400 naming
   * `proving_system` or `kind` where the circuit has no key for that system or no such file.
   */
  readonly get: (
    accountId: AccountId,
    ref: string,
    kind: ArtifactKind,
    system?: ProvingSystem
  ) => Effect.Effect<ArtifactDownload, CircuitNotFound | CircuitNotReady | InvalidRequest | StorageError>
}>() {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const builtins = yield* BuiltinCircuits
      const repo = yield* ArtifactsRepo

      /** A stored artifact's bytes; a ready circuit whose file is gone is storage's failure, not the client's. */
      const stored = (digest: Digest) =>
        Effect.flatMap(repo.read(digest), (found) =>
          Option.match(found, {
            onNone: () => Effect.dieMessage(`Artifact ${digest} of a ready circuit is not in the artifact store`),
            onSome: (reader): Effect.Effect<ArtifactBytes> => Effect.succeed({ size: reader.size, read: reader.range })
          }))

      const bytesOf = (circuit: Circuit, digest: Digest) => {
        const builtin = circuit.owner === "builtin" && builtins.artifact !== undefined ? builtins.artifact(digest) : Option.none()
        return Option.isSome(builtin) ? Effect.succeed(builtin.value) : stored(digest)
      }

      const get = (accountId: AccountId, reference: string, kind: ArtifactKind, system?: ProvingSystem) =>
        Effect.gen(function*() {
          const found = yield* circuits.get(accountId, reference)
          if (Option.isNone(found)) {
            const named = formatCircuitRef(parseCircuitRef(reference))
            return yield* new CircuitNotFound({ message: `No circuit ${JSON.stringify(named)} in this account` })
          }
          const circuit = found.value
          const named = `${circuit.name}@${circuit.version}`
          if (circuit.status !== "ready") {
            return yield* new CircuitNotReady({
              message: `Circuit ${named} is ${circuit.status}; only a ready circuit has artifacts to download`
            })
          }
          const asked = system ?? circuit.proving_system
          const variant = circuits.asSystem(circuit, asked)
          if (Option.isNone(variant)) {
            return yield* invalidRequest([{
              path: "proving_system",
              message: `circuit ${named} has keys for ${circuit.proving_systems.join(", ")}, not ${asked}`
            }])
          }
          const artifact = artifactOf(variant.value, kind)
          if (Option.isNone(artifact)) {
            return yield* invalidRequest([{
              path: "kind",
              message: `circuit ${named} has no ${kind}; it has ${artifactKindsOf(variant.value).join(", ")}`
            }])
          }
          const value = artifact.value
          const isJson = typeof value === "object"
          const bytes = isJson
            ? bytesInMemory(new TextEncoder().encode(JSON.stringify(value.json)))
            : yield* bytesOf(variant.value, value)
          // Keys differ by system; a wasm, r1cs or sym is the circuit's whatever the system.
          const systemPart = kind === "zkey" || kind === "verification_key" ? `.${asked}` : ""
          return {
            circuit: circuit.name,
            version: circuit.version,
            kind,
            proving_system: asked,
            filename: `${named}${systemPart}.${EXTENSIONS[kind]}`,
            content_type: CONTENT_TYPES[kind],
            digest: isJson ? null : value,
            bytes
          } satisfies ArtifactDownload
        })

      return { get }
    })
  )
}
