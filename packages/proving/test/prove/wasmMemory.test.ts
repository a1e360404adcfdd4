import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { buildFilesOf } from "../../src/catalog.js"
import { WASM_PAGE, withMemoryCeiling } from "../../src/wasmMemory.mjs"

// The compiler's lib has no WebAssembly types (no DOM lib); these are the few calls used here.
interface Memory { readonly buffer: ArrayBuffer; grow(pages: number): number }
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>
  Module: { new(bytes: Uint8Array): object; exports(module: object): ReadonlyArray<{ name: string; kind: string }> }
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

// circom's witness generators import only these runtime callbacks.
const imports = { runtime: { exceptionHandler() {}, printErrorMessage() {}, writeBufferMessage() {}, showSharedRWMemory() {} } }
const instantiate = async (bytes: Uint8Array) =>
  (await WebAssembly.instantiate(bytes, imports)).instance.exports.memory as Memory

describe("the witness generator's memory ceiling", () => {
  const wasm = readFileSync(buildFilesOf("multiplier").wasm)

  it("lets a circom wasm grow to the ceiling and no further, so an upload cannot take the process's memory", async () => {
    const unbounded = await instantiate(wasm)
    const start = unbounded.buffer.byteLength / WASM_PAGE
    expect(() => unbounded.grow(100)).not.toThrow()

    const bounded = await instantiate(withMemoryCeiling(wasm, start + 10))
    expect(() => bounded.grow(10)).not.toThrow()
    expect(() => bounded.grow(1)).toThrow(RangeError)
  })

  it("refuses a wasm that needs more than the ceiling to start", () => {
    expect(() => withMemoryCeiling(wasm, 1)).toThrow(/needs \d+ bytes of memory to start/)
  })

  // Every proof in the suite is made with a patched generator; this checks the module's shape.
  it("leaves the rest of the module as it was", () => {
    const patched = withMemoryCeiling(wasm, 4096)
    expect(WebAssembly.Module.exports(new WebAssembly.Module(patched))).toEqual(WebAssembly.Module.exports(new WebAssembly.Module(wasm)))
    expect(patched.length).toBeLessThanOrEqual(wasm.length + 8)
  })
})
