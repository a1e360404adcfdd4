import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import { type ProvingSystem, PROVING_SYSTEMS, Verifier } from "@mzk/core"
import { Console, Effect, Option } from "effect"
import { readFile } from "node:fs/promises"
import { choiceOption, CommandFailed, UsageError } from "./failures.js"

// The verifier is loaded when the command runs, so `mzk --help` never reads snarkjs.
const loadVerifier = Effect.promise(() => import("@mzk/proving"))

/**
 * A file that must exist. Checked here rather than by `Options.file`'s `exists`, whose refusals
 * ("Path 'x' must exist", "Expected path 'x' to be a regular file") do not say which flag named it.
 */
const file = (name: string, what: string) =>
  Options.text(name).pipe(
    Options.withPseudoName("file"),
    Options.withDescription(what),
    Options.mapEffect((path) =>
      Effect.flatMap(FileSystem.FileSystem, (fs) => fs.stat(path)).pipe(
        Effect.map((info) => info.type),
        Effect.orElseSucceed(() => undefined),
        Effect.flatMap((type) =>
          type === "File"
            ? Effect.succeed(path)
            : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name}: ${path} ${type === undefined ? "does not exist" : "is not a file"}`)))
        )
      )
    )
  )

const readJson = (path: string, flag: string) =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(path, "utf8")) as unknown,
    catch: (error) => new UsageError({ message: `--${flag} ${path}: not a JSON file (${error instanceof Error ? error.message : String(error)})` })
  })

/**
 * `mzk verify`: a proof checked offline, by the verifier `POST /verifications` runs (the same
 * checks of every field and point first), from the files snarkjs writes. No database, no server.
 * Exit 0 when valid, 1 when the proof does not hold, 2 for a malformed input. An UltraHonk proof is
 * checked against the CRS it was made with (`--noir-crs`, as `mzk serve` takes it).
 */
export const verifyCommand = Command.make("verify", {
  provingSystem: choiceOption("proving-system", PROVING_SYSTEMS).pipe(
    Options.withDescription(
      "The proof's system: groth16, plonk or fflonk (snarkjs JSON), or ultra_honk (a Noir circuit's verification_key and proof as mzk returns them, with --noir-crs)"
    )
  ),
  noirCrs: Options.directory("noir-crs", { exists: "yes" }).pipe(
    Options.withDescription("ultra_honk only: the UltraHonk CRS directory the proof was made with (bn254_g1.dat, bn254_g2.dat)"),
    Options.optional
  ),
  key: file("verification-key", "The verification key, as `snarkjs zkey export verificationkey` writes it"),
  proof: file("proof", "The proof JSON (snarkjs's proof.json)"),
  publicSignals: file("public", "The public signals JSON (snarkjs's public.json: an array of decimal strings)"),
  json: Options.boolean("json").pipe(Options.withDescription("Print {\"valid\": …} as JSON"))
}, (flags) =>
  Effect.gen(function*() {
    const [key, proof, signals] = yield* Effect.all([
      readJson(flags.key, "verification-key"),
      readJson(flags.proof, "proof"),
      readJson(flags.publicSignals, "public")
    ])
    if (!Array.isArray(signals) || !signals.every((s) => typeof s === "string")) {
      return yield* new UsageError({ message: `--public ${flags.publicSignals}: must be a JSON array of decimal strings` })
    }
    const noirCrs = Option.getOrUndefined(flags.noirCrs)
    if (flags.provingSystem === "ultra_honk" && noirCrs === undefined) {
      return yield* new UsageError({ message: "--proving-system ultra_honk needs --noir-crs DIR: the UltraHonk CRS the proof was made with" })
    }
    const { releaseVerifierThreads, VerifierLive } = yield* loadVerifier
    const valid = yield* Effect.flatMap(Verifier, (verifier) => verifier.prepare(flags.provingSystem as ProvingSystem, key, proof, signals)).pipe(
      Effect.mapError((invalid) => new UsageError({
        message: invalid.details.map((d) => `${d.path}: ${d.message}`).join("; "),
        hint: "the files must be what snarkjs writes for this proving system"
      })),
      Effect.flatten,
      Effect.provide(VerifierLive(noirCrs === undefined ? {} : { noirCrs })),
      // snarkjs's curve keeps worker threads alive: this process is done with them.
      Effect.ensuring(Effect.promise(releaseVerifierThreads))
    )
    yield* Console.log(flags.json ? JSON.stringify({ valid, proving_system: flags.provingSystem }) : valid ? "valid" : "INVALID: the proof does not hold for these public signals")
    if (!valid) return yield* new CommandFailed({ message: "the proof does not verify" })
  })
).pipe(Command.withDescription("Verify a proof offline from snarkjs's files (verification key, proof, public signals)"))
