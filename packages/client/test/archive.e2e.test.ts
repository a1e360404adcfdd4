import { expect, it } from "@effect/vitest"
import { createClient, MzkApiError, type Proof } from "@mzk/client"
import { Effect } from "effect"
import { describe } from "vitest"
import { MUL_SOURCE } from "../../proving/test/fixtures/mulSource.js"
import { tarGz } from "../../http/test/archives.js"
import { serverWithAccount } from "../../server/test/circuits/circuits.js"

describe("circuits.create with an archive, against a real server", () => {
  it.scopedLive("a tar.gz and the main file's path: built, proven; a bad entry is an MzkApiError naming it", () =>
    Effect.gen(function*() {
      const { baseUrl, keyOf } = yield* serverWithAccount({ workers: true })
      const { token } = yield* keyOf("Client archives")
      const mzk = createClient({ baseUrl, apiKey: token })
      const run = <A>(f: () => Promise<A>) => Effect.promise(f)

      const archive = tarGz([{ path: "circuits/mul.circom", content: MUL_SOURCE }])
      const created = yield* run(() => mzk.circuits.create({ name: "mul", archive, main: "circuits/mul.circom" }))
      expect(created).toMatchObject({ name: "mul", status: "compiling" })
      let circuit = created
      while (circuit.status === "compiling") {
        yield* Effect.sleep("200 millis")
        circuit = yield* run(() => mzk.circuits.get("mul"))
      }
      expect(circuit).toMatchObject({ status: "ready", public_signals: ["c"] })
      let proof: Proof = yield* run(() => mzk.proofs.create({ type: "mul", inputs: { a: 3, b: 11 } }))
      while (proof.status === "queued" || proof.status === "running") {
        yield* Effect.sleep("200 millis")
        proof = yield* run(() => mzk.proofs.get(proof.proof_id))
      }
      expect(proof).toMatchObject({ status: "completed", public_inputs: { c: "33" } })

      const refused = yield* run(() =>
        mzk.circuits.create({ name: "escape", archive: tarGz([{ path: "../mul.circom", content: MUL_SOURCE }]), main: "mul.circom" })
          .then(() => undefined, (error: unknown) => error))
      expect(refused).toBeInstanceOf(MzkApiError)
      expect(refused).toMatchObject({ status: 400, code: "invalid_request" })
      expect((refused as MzkApiError).details).toEqual([
        { path: "archive", message: 'entry "../mul.circom": the path "../mul.circom" has an empty, . or .. segment; give its place inside the upload' }
      ])
    }), 180_000)
})
