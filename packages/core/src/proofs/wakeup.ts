import { Context, Layer } from "effect"
import { makeWakeup, type Wakeup } from "../kernel/wakeup.js"

/** Proofs were queued or a running proof settled: the proof worker claims at once. */
export class ProofWakeup extends Context.Tag("@mzk/core/ProofWakeup")<ProofWakeup, Wakeup>() {
  static readonly layer = Layer.effect(this, makeWakeup)
}

/**
 * A running proof was canceled: the proof worker checks at once that the proofs it runs are still
 * its own, and stops the ones that are not (instead of at its next check).
 */
export class ProofCancelWakeup extends Context.Tag("@mzk/core/ProofCancelWakeup")<ProofCancelWakeup, Wakeup>() {
  static readonly layer = Layer.effect(this, makeWakeup)
}
