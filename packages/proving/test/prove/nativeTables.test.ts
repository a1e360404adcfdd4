// The native prover's MSM tables under a memory budget and from the disk cache: a key loaded in a
// fresh process under a small budget stays within the README's formula (peak RSS measured by the
// process itself) and proves correctly; a second process maps the tables another one wrote instead
// of building them; a cache file that is corrupt (a flipped byte, truncated) is detected, deleted
// and rebuilt; a file made for another plan or kernel is never used. Every proof is verified by
// snarkjs. Skipped where the addon is not built (required where CI=true: native.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { loadNativeProver } from "@mzk/prover-native"
import { buildPoseidon } from "circomlibjs"
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { buildFilesOf } from "../../src/catalog.js"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

const CHILD = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "tablesChild.mjs")
const files = buildFilesOf("merkle_membership")
const vkey = JSON.parse(readFileSync(files.vkey, "utf8")) as unknown
const zkeyDigest = createHash("sha256").update(readFileSync(files.zkey)).digest("hex")
const MiB = 2 ** 20
// What the child's peak may exceed the formula by: the JS objects of two proofs, thread stacks,
// allocator bookkeeping. The tables alone are 42 MiB without a budget, so it is not a loose bound.
const SLACK = 8 * MiB

interface ChildOut {
  readonly proofs: ReadonlyArray<{ readonly proof: unknown; readonly publicSignals: ReadonlyArray<string> }>
  readonly info: {
    readonly tableBytes: number
    readonly tableBytesMapped: number
    readonly residentBytes: number
    readonly scratchBytes: number
    readonly tableCache: string
    readonly msm: Record<string, { readonly copies: number }>
  }
  readonly stats: { readonly tableBytesMapped: number; readonly tableBytesBuilt: number }
  readonly growth: number
  readonly resetPeak: boolean
}

let dir: string
let wtnsPath: string

const child = (options: Record<string, unknown>): ChildOut => {
  const out = execFileSync(process.execPath, [CHILD, files.zkey, zkeyDigest, wtnsPath, JSON.stringify(options)], {
    encoding: "utf8",
    maxBuffer: 1 << 24
  })
  return JSON.parse(out.trim().split("\n").pop()!) as ChildOut
}

const verified = async (out: ChildOut) => {
  expect(out.proofs).toHaveLength(2)
  for (const { proof, publicSignals } of out.proofs) expect(await snarkjs.groth16.verify(vkey, publicSignals, proof)).toBe(true)
}

const tableFiles = (cacheDir: string) => readdirSync(cacheDir).filter((name) => name.endsWith(".tables"))

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mzk-tables-"))
  const poseidon = await buildPoseidon()
  const hash = (xs: ReadonlyArray<bigint>) => poseidon.F.toObject(poseidon(xs))
  const secret = 12345n
  const siblings = Array.from({ length: 20 }, (_, i) => BigInt(i * 7919 + 1))
  const bits = Array.from({ length: 20 }, (_, i) => i % 3 === 0)
  let node = hash([secret])
  siblings.forEach((sibling, i) => (node = bits[i] ? hash([sibling, node]) : hash([node, sibling])))
  const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
  const runtime = (await import(pathToFileURL(join(dirname(fromSnarkjs.resolve("circom_runtime")), "..", "main.js")).href)) as {
    WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<{ calculateWTNSBin: (inputs: unknown, sanity: number) => Promise<Uint8Array> }>
  }
  const calculator = await runtime.WitnessCalculatorBuilder(readFileSync(files.wasm))
  const wtns = await calculator.calculateWTNSBin({
    secret: secret.toString(),
    path_elements: siblings.map(String),
    path_indices: bits.map((b) => (b ? "1" : "0")),
    root: node.toString()
  }, 0)
  wtnsPath = join(dir, "merkle.wtns")
  writeFileSync(wtnsPath, wtns)
})
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

describe.skipIf(addon === undefined)("native tables under a memory budget", { timeout: 120_000 }, () => {
  it("a key loaded under a small budget stays within the formula's bound (peak RSS of its process) and proves", async () => {
    const budget = 16 * MiB
    const out = child({ memoryBudgetMB: budget / MiB, threads: 2 })
    await verified(out)
    const { residentBytes, scratchBytes, tableBytes } = out.info
    // The formula's terms, as the key reports them, within the budget...
    expect(residentBytes + tableBytes + scratchBytes).toBeLessThanOrEqual(budget)
    // ...and the process's measured peak growth within the formula (it would be 42 MiB of tables
    // and more without a budget).
    if (out.resetPeak) expect(out.growth).toBeLessThanOrEqual(residentBytes + tableBytes + scratchBytes + SLACK)
    // Not the degenerate plan: what the budget leaves goes to shifted copies.
    expect(Math.max(...Object.values(out.info.msm).map((p) => p.copies))).toBeGreaterThan(1)
  })

  it("with no room for copies it is plain windowed Pippenger, and a budget below the bases and scratch is refused", async () => {
    const least = child({ memoryBudgetMB: 7, threads: 1 })
    await verified(least)
    for (const plan of Object.values(least.info.msm)) expect(plan.copies).toBe(1)
    expect(() => addon!.loadZkeyFile(files.zkey, { sha256: zkeyDigest, memoryBudgetMB: 1, cache: false })).toThrow(
      expect.objectContaining({ code: "MZK_OUT_OF_MEMORY", message: expect.stringMatching(/needs at least \d+ MiB/) })
    )
    // The pool's choice: loaded anyway on its bases alone, and saying so.
    const over = addon!.loadZkeyFile(files.zkey, { sha256: zkeyDigest, memoryBudgetMB: 1, overBudget: "least", cache: false })
    expect(addon!.zkeyInfo(over).overBudget).toBe(true)
    for (const plan of Object.values(addon!.zkeyInfo(over).msm)) expect(plan.copies).toBe(1)
    const out = addon!.prove(over, new Uint8Array(readFileSync(wtnsPath)))
    expect(await snarkjs.groth16.verify(vkey, out.publicSignals, out.proof)).toBe(true)
    addon!.unloadZkey(over)
  })
})

// Each case starts several processes that build tables: minutes on a loaded two-core machine.
describe.skipIf(addon === undefined)("native tables from the disk cache", { timeout: 180_000 }, () => {
  const options = (cacheDir: string, extra: Record<string, unknown> = {}) => ({ memoryBudgetMB: 16, threads: 2, tableCacheDir: cacheDir, ...extra })

  it("the first process builds and writes the tables, a second one maps them; both prove", async () => {
    const cacheDir = join(dir, "shared")
    const first = child(options(cacheDir))
    expect(first.info.tableCache).toBe("written")
    expect(first.stats.tableBytesMapped).toBe(0)
    expect(tableFiles(cacheDir)).toHaveLength(1)
    const second = child(options(cacheDir))
    expect(second.info.tableCache).toBe("mapped")
    expect(second.stats.tableBytesBuilt).toBe(second.info.tableBytes - second.info.tableBytesMapped)
    expect(second.info.tableBytesMapped).toBeGreaterThan(0)
    expect(second.info.tableBytes).toBe(first.info.tableBytes)
    // All but the one-byte-per-base "present" flags come from the file.
    expect(second.info.tableBytesMapped).toBeGreaterThan(0.9 * second.info.tableBytes)
    await verified(first)
    await verified(second)
  })

  it("a cache file with a flipped byte or truncated is detected, deleted and rebuilt, never used", async () => {
    const cacheDir = join(dir, "corrupt")
    await verified(child(options(cacheDir)))
    const [name] = tableFiles(cacheDir)
    const path = join(cacheDir, name!)
    const size = statSync(path).size
    const flip = (at: number, bit: number) => {
      const bytes = readFileSync(path)
      bytes.writeUInt8(bytes.readUInt8(at) ^ bit, at)
      writeFileSync(path, bytes)
    }
    const corruptions: ReadonlyArray<[string, () => void]> = [
      ["a flipped byte in the body", () => flip(size - 1000, 0x01)],
      ["a flipped byte in the header", () => flip(20, 0x40)],
      ["truncated", () => truncateSync(path, size - 64)]
    ]
    for (const [what, corrupt] of corruptions) {
      corrupt()
      const out = child(options(cacheDir))
      expect(out.info.tableCache, what).toBe("rebuilt")
      expect(out.info.tableBytesMapped, what).toBe(0)
      await verified(out)
      // The rebuilt file is whole again: the next process maps it.
      expect(statSync(path).size, what).toBe(size)
      expect(child(options(cacheDir)).info.tableCache, what).toBe("mapped")
    }
  })

  it("a file made for another plan or kernel is never reused", async () => {
    const cacheDir = join(dir, "plans")
    expect(child(options(cacheDir)).info.tableCache).toBe("written")
    const [wide] = tableFiles(cacheDir)
    // Another budget gives another plan: its own file, built, not the first one mapped.
    const other = child(options(cacheDir, { memoryBudgetMB: 12 }))
    expect(other.info.tableCache).toBe("written")
    await verified(other)
    const [narrow] = tableFiles(cacheDir).filter((name) => name !== wide)
    // The first plan's file put where the second plan's belongs is refused by its header, and rebuilt.
    writeFileSync(join(cacheDir, narrow!), readFileSync(join(cacheDir, wide!)))
    const refused = child(options(cacheDir, { memoryBudgetMB: 12 }))
    expect(refused.info.tableCache).toBe("rebuilt")
    await verified(refused)
    expect(child(options(cacheDir)).info.tableCache).toBe("mapped")
    if (addon!.kernels.includes("adx")) {
      const generic = child(options(cacheDir, { kernel: "generic" }))
      expect(generic.info.tableCache).toBe("written")
      await verified(generic)
      expect(tableFiles(cacheDir)).toHaveLength(3)
    }
  })

  it("the cache is bounded: least recently used files go first", () => {
    const cacheDir = join(dir, "bounded")
    child(options(cacheDir, { memoryBudgetMB: 12 }))
    child(options(cacheDir))
    expect(tableFiles(cacheDir)).toHaveLength(2)
    // A bound below two files: writing a third plan's file deletes the two older ones.
    child(options(cacheDir, { memoryBudgetMB: 24, tableCacheMaxMB: 1 }))
    expect(tableFiles(cacheDir)).toHaveLength(1)
    expect(child(options(cacheDir, { memoryBudgetMB: 24 })).info.tableCache).toBe("mapped")
  })
})
