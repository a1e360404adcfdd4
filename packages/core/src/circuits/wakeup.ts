import { Context, Layer } from "effect"
import { makeWakeup, type Wakeup } from "../kernel/wakeup.js"

/** A circuit was uploaded or a build settled: the build loop claims at once. */
export class CircuitBuildWakeup extends Context.Tag("@mzk/core/CircuitBuildWakeup")<CircuitBuildWakeup, Wakeup>() {
  static readonly layer = Layer.effect(this, makeWakeup)
}
