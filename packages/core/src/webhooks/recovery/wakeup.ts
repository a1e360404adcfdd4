import { Context, Layer } from "effect"
import { makeWakeup, type Wakeup } from "../../kernel/wakeup.js"

/** A recovery was asked for, or has another batch to run: the recovery loop starts at once. */
export class RecoveryWakeup extends Context.Tag("@mzk/core/RecoveryWakeup")<RecoveryWakeup, Wakeup>() {
  static readonly layer = Layer.effect(this, makeWakeup)
}
