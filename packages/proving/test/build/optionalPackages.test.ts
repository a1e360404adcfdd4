import { describe, expect, it } from "vitest"
import { makeCircuitCompiler, NO_PTAU_MESSAGE } from "../../src/build/compiler.js"
import { importOptional, missingPackages, OPTIONAL_PACKAGES } from "../../src/optionalPackages.mjs"

describe("optional packages", () => {
  it("are all installed in this repository", () => {
    expect(missingPackages(Object.keys(OPTIONAL_PACKAGES))).toBeUndefined()
  })

  it("a missing one is named with the feature that needs it and the command that installs it", () => {
    expect(missingPackages(["circom2", "circomlib"], (name) => name !== "circom2")).toEqual({
      missing: ["circom2"],
      message: "Uploads of circom sources need the optional package circom2, not installed here: " +
        "its operator installs it beside @mzk/proving (npm install circom2@0.2.23)."
    })
    expect(missingPackages(["circom2", "circomlib"], () => false)?.message).toContain("npm install circom2@0.2.23 circomlib@2.0.5")
  })

  it("importing a missing one rejects with that sentence, not a resolver's stack", async () => {
    await expect(importOptional("mzk-no-such-package")).rejects.toThrow(
      /^Some features need the optional package mzk-no-such-package, not installed here: .*npm install mzk-no-such-package@latest/
    )
    await expect(importOptional("circom2")).resolves.toHaveProperty("CircomRunner")
  })

  it("without circom2 the compiler refuses circom sources (setup_unavailable's message), even with a powers of tau", () => {
    const limits = { timeoutMs: 60_000, memoryBytes: 1 << 30 }
    const without = makeCircuitCompiler({ ...limits, ptau: "/any.ptau", isInstalled: (name) => name !== "circom2" })
    expect(without.sourceSetup).toEqual({ available: false, message: expect.stringContaining("npm install circom2@0.2.23") })
    expect(makeCircuitCompiler({ ...limits, ptau: "/any.ptau" }).sourceSetup).toEqual({ available: true, developmentOnly: false })
    expect(makeCircuitCompiler(limits).sourceSetup).toEqual({ available: false, message: NO_PTAU_MESSAGE })
  })
})
