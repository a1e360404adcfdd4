import { expect, it } from "@effect/vitest"
import { createClient, MzkApiError } from "@mzk/client"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe } from "vitest"
import { serverWithAccount } from "../../server/test/circuits/circuits.js"

/** The built-in circuits' files, as the server serves them. */
const BUILD_DIR = fileURLToPath(new URL("../../proving/build/", import.meta.url))

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** Every chunk of a stream, read as an application streaming to a file would. */
const readAll = async (body: ReadableStream<Uint8Array>) => {
  const chunks: Array<Uint8Array> = []
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return new Uint8Array(Buffer.concat(chunks))
}

describe("circuits.artifact against a real server", () => {
  it.scopedLive("streams a file, resumes it from an offset, revalidates it, and rejects what the server refuses", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: false })
      const { token } = yield* keyOf("Client downloads")
      const mzk = createClient({ baseUrl, apiKey: token })
      const run = <A>(f: () => Promise<A>) => Effect.promise(f)
      const file = new Uint8Array(readFileSync(join(BUILD_DIR, "merkle_membership", "merkle_membership.zkey")))

      const whole = yield* run(() => mzk.circuits.artifact("merkle_membership", "zkey"))
      expect(whole).toMatchObject({
        notModified: false,
        etag: sha256(file),
        size: file.length,
        offset: 0,
        length: file.length,
        contentType: "application/octet-stream",
        filename: "merkle_membership@1.groth16.zkey"
      })
      // Compared by digest: vitest's deep equality walks 3 MB byte by byte for half a minute.
      expect(sha256(yield* run(() => readAll(whole.body)))).toBe(whole.etag)

      // A download broken off after 1 MB, resumed: the rest, and the two parts are the file.
      const resumed = yield* run(() => mzk.circuits.artifact("merkle_membership", "zkey", { offset: 1_000_000, ifRange: whole.etag }))
      expect([resumed.offset, resumed.length, resumed.size]).toEqual([1_000_000, file.length - 1_000_000, file.length])
      expect(sha256(yield* run(() => resumed.bytes()))).toBe(sha256(file.subarray(1_000_000)))
      // Resuming with the tag of another file gets the whole file, from 0.
      const other = yield* run(() => mzk.circuits.artifact("merkle_membership", "zkey", { offset: 1_000_000, ifRange: "0".repeat(64) }))
      expect([other.offset, other.length]).toEqual([0, file.length])
      yield* run(() => other.body.cancel())

      const held = yield* run(() => mzk.circuits.artifact("merkle_membership", "zkey", { ifNoneMatch: whole.etag }))
      expect([held.notModified, held.etag, held.length, (yield* run(() => held.bytes())).length]).toEqual([true, whole.etag, 0, 0])

      const plonk = yield* run(() => mzk.circuits.artifact("multiplier", "verification_key", { proving_system: "plonk" }))
      expect(JSON.parse(new TextDecoder().decode(yield* run(() => plonk.bytes()))))
        .toEqual(JSON.parse(readFileSync(join(BUILD_DIR, "multiplier", "verification_key.plonk.json"), "utf8")))

      const refused = (call: () => Promise<unknown>) => run(() => call().then(() => undefined, (error: unknown) => error))
      const past = yield* refused(() => mzk.circuits.artifact("multiplier", "wasm", { offset: 10_000_000 }))
      expect(past).toBeInstanceOf(MzkApiError)
      expect(past).toMatchObject({ status: 416, code: "range_not_satisfiable" })
      expect(yield* refused(() => mzk.circuits.artifact("nothing", "wasm"))).toMatchObject({ status: 404, code: "circuit_not_found" })
      expect(yield* refused(() => mzk.circuits.artifact("multiplier", "sym"))).toMatchObject({ status: 400, details: [{ path: "kind" }] })
    }), 60_000)
})
