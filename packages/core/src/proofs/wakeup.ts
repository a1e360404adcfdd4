import { Context, Layer } from "effect"
import { makeWakeup, type Wakeup } from "../kernel/wakeup.js"

/** Proofs were queued or a running proof settled: the proof worker claims at once. */
export class ProofWakeup extends Context.Tag("@mzk/core/ProofWakeup")<ProofWakeup, Wakeup>() {
  static readonly layer = Layer.effect(this, makeWakeup)
}
