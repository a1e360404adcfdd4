import { BuildFailure } from "@mzk/core"
import { Effect, Either, Exit } from "effect"
import fc from "fast-check"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { makeCircuitCompiler } from "../../src/build/compiler.js"
import { decodeChildMessage, type JobKind } from "../../src/build/jobAnswer.js"

const failureOf = (kind: JobKind, message: unknown) => {
  const decoded = decodeChildMessage(kind, message)
  if (decoded._tag !== "answer" || Either.isRight(decoded.answer)) throw new Error(`not a failure: ${JSON.stringify(decoded)}`)
  const { code, message: text, file, line } = decoded.answer.left
  return { code, message: text, file, line }
}

describe("a build child's answer", () => {
  it("the Noir engine's invalid_upload is the tenant's compile_error for sources and invalid_artifacts for a prebuilt program", () => {
    const said = { ok: false, code: "invalid_upload", message: "Nargo.toml: dependencies are not supported", file: "Nargo.toml" }
    expect(failureOf("noir", said)).toMatchObject({ code: "compile_error", message: said.message, file: "Nargo.toml" })
    expect(failureOf("acir", { ...said, file: undefined })).toMatchObject({ code: "invalid_artifacts", message: said.message })
    expect(failureOf("circom", { ok: false, code: "compile_error", message: "x", file: "main.circom", line: 3 })).toMatchObject({ line: 3 })
  })

  it("anything else it may say is unreadable, never a throw: unknown codes, a line that is no integer, missing fields, garbage", () => {
    for (
      const message of [
        { ok: false, code: "no_such_code", message: "x" },
        { ok: false, code: "compile_error", message: "x", line: 1.5 },
        { ok: false, code: "compile_error" },
        { ok: true },
        { ok: true, constraints: -1, inputs: [], public_signals: [], verification_key: {}, development_only: false },
        { ok: true, constraints: 1, inputs: [{ name: "a" }], public_signals: [], verification_key: {}, development_only: false },
        { progress: null },
        { progress: { event: "step" } },
        null,
        "garbage",
        42
      ]
    ) {
      expect(decodeChildMessage("circom", message)._tag, JSON.stringify(message)).toBe("unreadable")
    }
    expect(decodeChildMessage("noir", { ok: true, program: JSON.stringify({ abi: {} }) })._tag).toBe("unreadable")
    expect(decodeChildMessage("noir", { ok: true, program: "{" })._tag).toBe("unreadable")
    expect(decodeChildMessage("devptau", { ok: true, file: "/p/dev_pot8.ptau" })).toMatchObject({ _tag: "answer" })
    expect(decodeChildMessage("devptau", { progress: { event: "done", power: 8, file: "/p", bytes: 10 } })._tag).toBe("progress")
  })

  it("decodes every JSON value and every kind without throwing", () => {
    const kinds = fc.constantFrom<JobKind>("circom", "artifacts", "devptau", "noir", "acir")
    const shaped = fc.record({ ok: fc.boolean(), code: fc.string(), message: fc.anything(), line: fc.anything(), progress: fc.anything() }, { requiredKeys: [] })
    fc.assert(fc.property(kinds, fc.oneof(fc.jsonValue(), fc.anything(), shaped), (kind, message) => {
      expect(["progress", "answer", "unreadable"]).toContain(decodeChildMessage(kind, message)._tag)
    }))
  })
})

describe("a build child gone wrong fails its build, never the process", () => {
  const compiler = makeCircuitCompiler({
    timeoutMs: 60_000,
    memoryBytes: 1 << 30,
    noirCrs: "/nonexistent-crs",
    jobScript: fileURLToPath(new URL("../fixtures/answeringJob.mjs", import.meta.url))
  })
  const buildAnswering = (answers: unknown) =>
    Effect.runPromiseExit(compiler.build({
      kind: "noir",
      files: { "Nargo.toml": new Uint8Array(), "src/main.nr": new TextEncoder().encode(JSON.stringify(answers)) }
    }))
  const failure = (exit: Exit.Exit<unknown, BuildFailure>) => {
    if (Exit.isSuccess(exit)) throw new Error("the build succeeded")
    const failed = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    if (failed === undefined) throw new Error(`not a failure: ${String(exit.cause)}`)
    return { code: failed.code, message: failed.message, file: failed.file }
  }

  it("an engine code the server does not know, garbage, or an ABI that is not noirc's: each one build's failure", async () => {
    expect(failure(await buildAnswering({ ok: false, code: "invalid_upload", message: "bad manifest", file: "Nargo.toml" })))
      .toEqual({ code: "compile_error", message: "bad manifest", file: "Nargo.toml" })
    for (const garbage of [{ ok: false, code: "exploded", message: "x" }, "garbage", [{ progress: 7 }], { ok: true }]) {
      const failed = failure(await buildAnswering(garbage))
      expect(failed.code, JSON.stringify(garbage)).toBe("internal")
      // The tenant reads no reason (the log has it), and no server path.
      expect(failed.message).toBe("the build process gave an answer this server cannot read; the server's log has the details")
    }
    const hugeArray = { kind: "array", length: 2 ** 31, type: { kind: "field" } }
    const program = (abi: unknown) => ({ ok: true, program: JSON.stringify({ noir_version: "1.0.0-beta.3", abi, bytecode: "AAAA" }) })
    for (const abi of [{ parameters: [null], return_type: null }, { parameters: [{ name: "x", type: hugeArray, visibility: "public" }], return_type: null }]) {
      expect(failure(await buildAnswering(program(abi))).code, JSON.stringify(abi)).toBe("compile_error")
    }
  })
})
