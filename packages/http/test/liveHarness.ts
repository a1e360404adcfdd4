import { DeliveryEngine, ProofLoops } from "@mzk/core"
import { eventually, FakeProver, makeScriptedTransport, type Script, testCore } from "@mzk/testkit"
import { Effect, Layer, ManagedRuntime } from "effect"
import { harnessOver } from "./support.js"

/**
 * Like `makeHarness`, but with the background loops running on the live clock: the proof worker
 * over the fake prover (10 ms a proof) and the delivery engine over a scripted transport (no
 * network; URLs the script does not name answer 200). Proofs complete and events are delivered.
 */
export const makeLiveHarness = async (script: Script = {}) => {
  const scripted = await Effect.runPromise(makeScriptedTransport(script))
  const base = testCore(undefined, { prover: FakeProver({ duration: "10 millis" }) })
  const loops = Layer.mergeAll(DeliveryEngine.layer.pipe(Layer.provide(scripted.layer)), ProofLoops)
  const { call, newAccount, close } = await harnessOver(ManagedRuntime.make(loops.pipe(Layer.provideMerge(base))))

  return { call, newAccount, eventually, requests: () => Effect.runPromise(scripted.requests), close }
}
