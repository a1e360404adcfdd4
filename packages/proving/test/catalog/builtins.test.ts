import { FAKE_BUILTIN_CIRCUITS } from "@mzk/testkit"
import { describe, expect, it } from "vitest"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { BUILTIN_CIRCUITS, buildFilesOf } from "../../src/catalog.js"

/** What a test without cryptography relies on: the testkit's copy promises the real built-ins' shapes. */
const shape = ({ constraints, description, development_only, field_modulus, inputs, name, owner, public_signals, status }: typeof BUILTIN_CIRCUITS[number]) =>
  ({ constraints, description, development_only, field_modulus, inputs, name, owner, public_signals, status })

describe("the testkit's copy of the built-in circuits", () => {
  it("has the names, inputs, public signals and constraint counts of the real ones, in the same order", () => {
    expect(FAKE_BUILTIN_CIRCUITS.map(shape)).toEqual(BUILTIN_CIRCUITS.map(shape))
  })
})

describe("the built-in circuits' artifacts", () => {
  it("are named by the SHA-256 of their build files, as the build's manifest records it", () => {
    for (const circuit of BUILTIN_CIRCUITS) {
      const files = buildFilesOf(circuit.name)
      expect(circuit.artifacts?.wasm).toBe(createHash("sha256").update(readFileSync(files.wasm)).digest("hex"))
      expect(circuit.artifacts?.zkey).toBe(createHash("sha256").update(readFileSync(files.zkey)).digest("hex"))
    }
  })
})
