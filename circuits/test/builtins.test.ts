import { FAKE_BUILTIN_CIRCUITS } from "@mzk/testkit"
import { describe, expect, it } from "vitest"
import { BUILTIN_CIRCUITS } from "../src/catalog.js"

/** What a test without cryptography relies on: the testkit's copy promises the real built-ins' shapes. */
const shape = ({ constraints, description, development_only, field_modulus, inputs, name, owner, public_signals, status }: typeof BUILTIN_CIRCUITS[number]) =>
  ({ constraints, description, development_only, field_modulus, inputs, name, owner, public_signals, status })

describe("the testkit's copy of the built-in circuits", () => {
  it("has the names, inputs, public signals and constraint counts of the real ones, in the same order", () => {
    expect(FAKE_BUILTIN_CIRCUITS.map(shape)).toEqual(BUILTIN_CIRCUITS.map(shape))
  })
})
