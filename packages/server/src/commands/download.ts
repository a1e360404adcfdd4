import { Args, Command, Options } from "@effect/cli"
import { type AccountId, ARTIFACT_KINDS, type ArtifactDownload, ArtifactDownloads, PROVING_SYSTEMS } from "@mzk/core"
import { Console, Effect, Option, Stream } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { type FileHandle, open, rename, rm } from "node:fs/promises"
import { database } from "./database.js"
import { choiceOption, CommandFailed } from "./failures.js"
import { CoreServicesLive } from "./lazy.js"

const failed = (message: string) => new CommandFailed({ message })

/** A file handle's `write` may write less than it is given; this writes all of `bytes`. */
const writeAll = async (file: FileHandle, bytes: Uint8Array) => {
  for (let offset = 0; offset < bytes.length;) offset += (await file.write(bytes, offset, bytes.length - offset)).bytesWritten
}

/** The bytes to stdout, each chunk once the pipe has taken the one before (a zkey can be gigabytes). */
const toStdout = (download: ArtifactDownload) =>
  Stream.runForEach(download.bytes.read(0, download.bytes.size), (chunk) =>
    Effect.async<void>((resume) => {
      if (process.stdout.write(chunk)) resume(Effect.void)
      else process.stdout.once("drain", () => resume(Effect.void))
    }))

/**
 * The file written beside `target` and renamed onto it once whole and checked against its digest,
 * so `target` is never a partial or wrong file; its SHA-256.
 */
const toFile = (download: ArtifactDownload, target: string) =>
  Effect.gen(function*() {
    const temp = `${target}.${randomBytes(6).toString("hex")}.part`
    const hash = createHash("sha256")
    const io = <A>(what: string, f: () => Promise<A>) =>
      Effect.tryPromise({ try: f, catch: (cause) => failed(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`) })
    return yield* Effect.acquireUseRelease(
      io(`Cannot write ${target}`, () => open(temp, "wx", 0o644)),
      (file) =>
        Stream.runForEach(download.bytes.read(0, download.bytes.size), (chunk) =>
          Effect.zipRight(Effect.sync(() => hash.update(chunk)), io(`Writing ${target} failed`, () => writeAll(file, chunk)))),
      (file) => Effect.promise(() => file.close())
    ).pipe(
      Effect.zipRight(Effect.suspend(() => {
        const digest = hash.digest("hex")
        return download.digest !== null && digest !== download.digest
          ? Effect.fail(failed(`The stored ${download.kind} does not match its digest ${download.digest}; nothing was written`))
          : Effect.as(io(`Cannot write ${target}`, () => rename(temp, target)), digest)
      })),
      Effect.onError(() => Effect.promise(() => rm(temp, { force: true })))
    )
  })

/**
 * `mzk circuits download`: one of a circuit's files, as `GET /circuits/{name}/artifacts/{kind}`
 * sends it, read from the database by the same rules (the core's `ArtifactDownloads`).
 */
export const downloadCommand = (account: Options.Options<AccountId>) =>
  Command.make("download", {
    name: Args.text({ name: "NAME" }).pipe(Args.withDescription("The circuit: NAME (its newest version) or NAME@N")),
    account,
    database,
    kind: choiceOption("kind", ARTIFACT_KINDS).pipe(
      Options.withDescription("The file: the witness calculator (wasm), proving key (zkey), verification key, " +
        "constraints (r1cs), signal names (sym), or a Noir circuit's program")
    ),
    provingSystem: choiceOption("proving-system", PROVING_SYSTEMS).pipe(
      Options.withDescription("zkey and verification_key: whose key (default: the circuit's own system)"),
      Options.optional
    ),
    out: Options.text("out").pipe(
      Options.withPseudoName("FILE"),
      Options.withDescription("Where to write it (default: the file's own name, NAME@N[.SYSTEM].EXT, here; - for stdout)"),
      Options.optional
    )
  }, (flags) =>
    Effect.gen(function*() {
      const found = yield* (yield* ArtifactDownloads).get(flags.account, flags.name, flags.kind, Option.getOrUndefined(flags.provingSystem)).pipe(
        Effect.mapError((refused) =>
          // A refusal that names a field names the flag it came from.
          failed(refused._tag === "InvalidRequest" && refused.details !== undefined && refused.details.length > 0
            ? refused.details.map((d) => `--${d.path.replace(/_/g, "-")}: ${d.message}`).join("; ")
            : refused.message)
        )
      )
      const target = Option.getOrElse(flags.out, () => found.filename)
      if (target === "-") return yield* toStdout(found)
      const digest = yield* toFile(found, target)
      yield* Console.log(`Wrote ${target}: ${found.bytes.size} bytes, sha256 ${digest}`)
    }).pipe(Effect.provide(CoreServicesLive({ database: flags.database })))).pipe(
    Command.withDescription("Write one of a circuit's files (wasm, zkey, …), as the API's artifacts endpoint sends it")
  )
