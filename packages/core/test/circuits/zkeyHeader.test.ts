// The proof system of an uploaded zkey, read from its section table as the bytes pass, where
// snarkjs puts the header section: first in a Groth16 key, last in a PLONK or FFLONK key (after
// every other section). Any chunking gives the same answer; a file that is not a zkey is
// `unknown`, one cut before its header section `short`. Through `Circuits.create` with the zkey
// staged as HTTP stages it: an upload naming another system than its zkey's is refused before
// anything is stored, and one naming none is recorded with its zkey's system from the start.
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Circuits, scanZkeySystem, zkeyProofSystem } from "@mzk/core"
import { FakeCompiler, testCore } from "@mzk/testkit"
import { Effect, Layer, Option, Stream } from "effect"
import fc from "fast-check"

const u32 = (v: number) => new Uint8Array(new Uint32Array([v]).buffer)
const u64 = (v: number) => new Uint8Array(new BigUint64Array([BigInt(v)]).buffer)
const concat = (parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
const section = (type: number, body: Uint8Array) => concat([u32(type), u64(body.length), body])
const binFile = (magic: string, sections: ReadonlyArray<Uint8Array>) =>
  concat([new TextEncoder().encode(magic), u32(1), u32(sections.length), ...sections])

/** Sections of the sizes given (filled with a byte that is no section header), then the header section: snarkjs's PLONK/FFLONK layout. */
const headerLast = (protocol: number, sizes: ReadonlyArray<number>) =>
  binFile("zkey", [...sizes.map((size, i) => section(i + 3, new Uint8Array(size).fill(0xab))), section(1, u32(protocol)), section(2, new Uint8Array(40))])
/** The header section first, as snarkjs writes a Groth16 key. */
const headerFirst = (protocol: number) => binFile("zkey", [section(1, u32(protocol)), section(2, new Uint8Array(600)), section(3, new Uint8Array(64))])

/** The scan over `bytes` cut at `cuts` (offsets, in any order). */
const scanned = (bytes: Uint8Array, cuts: ReadonlyArray<number>) => {
  const scan = scanZkeySystem()
  const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), bytes.length]
  for (let i = 0; i + 1 < at.length; i++) scan.push(bytes.subarray(at[i], at[i + 1]))
  return scan.result()
}

describe("the proof system of a zkey, from its section table", () => {
  it("Groth16's header section first; PLONK's and FFLONK's after megabytes of other sections", () => {
    expect(zkeyProofSystem(headerFirst(1))).toBe("groth16")
    expect(zkeyProofSystem(headerLast(2, [3 << 20, 17, 0, 1 << 20]))).toBe("plonk")
    expect(zkeyProofSystem(headerLast(10, [5 << 20, 64]))).toBe("fflonk")
  })

  it("the same answer whatever the chunks the bytes arrive in", () => {
    const files = [[headerFirst(1), "groth16"], [headerLast(2, [100, 7, 0, 300]), "plonk"], [headerLast(10, [250, 9]), "fflonk"]] as const
    fc.assert(
      fc.property(fc.constantFrom(...files), fc.array(fc.nat(), { maxLength: 40 }), ([bytes, system], cuts) => {
        expect(scanned(bytes, cuts.map((c) => c % bytes.length))).toBe(system)
      }),
      { numRuns: 300 }
    )
    // One byte at a time.
    const plonk = headerLast(2, [100, 7])
    expect(scanned(plonk, Array.from({ length: plonk.length }, (_, i) => i))).toBe("plonk")
  })

  it("not a zkey, a protocol mzk does not prove, or no header section among the sections: unknown; cut before the header: short", () => {
    expect(zkeyProofSystem(binFile("r1cs", [section(1, u32(1))]))).toBe("unknown")
    expect(zkeyProofSystem(new TextEncoder().encode("(module (func))"))).toBe("unknown")
    expect(zkeyProofSystem(headerLast(3, [10]))).toBe("unknown")
    expect(zkeyProofSystem(binFile("zkey", [section(3, new Uint8Array(8)), section(2, new Uint8Array(8))]))).toBe("unknown")
    const plonk = headerLast(2, [1000, 20])
    for (const end of [0, 11, 12, 500, plonk.length - 40 - 12 - 4 - 1]) expect(zkeyProofSystem(plonk.subarray(0, end))).toBe("short")
    expect(zkeyProofSystem(plonk.subarray(0, plonk.length - 40 - 12))).toBe("plonk")
  })
})

describe("Circuits.create with a staged zkey", () => {
  const sym = new TextEncoder().encode("1,1,0,main.c\n2,2,0,main.a\n")
  const core = testCore(undefined, { compiler: FakeCompiler() })

  it.effect("a zkey of another system than the upload names is a 400 naming proving_system, nothing stored; named none, its system is recorded", () =>
    Effect.gen(function*() {
      const circuits = yield* Circuits
      const account = (yield* (yield* Accounts).create({ name: "Acme" })).id
      // Staged in chunks of 4 KiB, as a body arrives: the header section is 3 MiB in.
      const plonk = headerLast(2, [3 << 20, 1000])
      const staged = (bytes: Uint8Array) =>
        circuits.stageUpload(Stream.fromIterable(Array.from({ length: Math.ceil(bytes.length / 4096) }, (_, i) => bytes.subarray(i * 4096, (i + 1) * 4096))))
      const upload = (name: string, proving_system?: "groth16" | "plonk" | "fflonk") =>
        Effect.scoped(Effect.gen(function*() {
          const source = { kind: "artifacts" as const, wasm: yield* staged(new Uint8Array(8)), zkey: yield* staged(plonk), sym: yield* staged(sym), r1cs: null }
          return yield* circuits.create(account, proving_system === undefined ? { name, source } : { name, source, proving_system })
        }))
      for (const named of ["groth16", "fflonk"] as const) {
        const refused = yield* Effect.flip(upload("wrong", named))
        expect(refused).toMatchObject({
          _tag: "InvalidRequest",
          details: [{ path: "proving_system", message: `the zkey is set up for plonk, not ${named}: send proving_system plonk, or a zkey set up for ${named}` }]
        })
      }
      expect(yield* circuits.get(account, "wrong")).toEqual(Option.none())
      expect(yield* upload("recognised")).toMatchObject({ status: "compiling", proving_system: "plonk" })
      expect(yield* upload("named", "plonk")).toMatchObject({ status: "compiling", proving_system: "plonk" })
    }).pipe(Effect.provide(Layer.fresh(core))), 60_000)
})
