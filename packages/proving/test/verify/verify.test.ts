// The native Groth16 verifier (@mzk/prover-native's verifyGroth16) against snarkjs's groth16.verify
// on the built-in circuits' real proofs: every proof (native prover and snarkjs prover, randomized
// by their blinding) verifies in both, and every mutation of one (a changed signal, a signal ≥ r,
// the wrong number of signals, π_A/π_B/π_C swapped or replaced, a coordinate changed so the point
// leaves its curve, π_B moved off G2 onto the twist) is refused by both. The worker's verify
// handler is checked through the pool: a valid proof is valid, a tampered one is not.
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ArtifactsRepo, Prover } from "@mzk/core"
import { loadNativeProver, type VerifyingKeyHandle } from "@mzk/prover-native"
import { Effect, Layer, Option } from "effect"
import { artifactsInMap } from "@mzk/testkit"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as snarkjs from "snarkjs"
import { ArtifactFilesLive } from "../../src/artifacts/files.js"
import { buildFilesOf, builtinCircuit } from "../../src/catalog.js"
import { ProverPoolLive } from "../../src/prove/pool.js"
import { makeCases } from "../fixtures/inputs.js"

const native = loadNativeProver()
const addon = native.ok ? native.addon : undefined

const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n
const mod = (a: bigint, m: bigint) => ((a % m) + m) % m

const fromSnarkjs = createRequire(createRequire(import.meta.url).resolve("snarkjs"))
const esm = (name: string) => import(pathToFileURL(join(dirname(fromSnarkjs.resolve(name)), "..", "main.js")).href)
type Calculator = { calculateWTNSBin: (inputs: unknown, sanityCheck: number) => Promise<Uint8Array> }

const CIRCUITS = ["multiplier", "range"] as const
const vkeyOf = (circuit: string) => JSON.parse(readFileSync(buildFilesOf(circuit).vkey, "utf8")) as Record<string, unknown>

type Proof = { pi_a: Array<string>; pi_b: Array<Array<string>>; pi_c: Array<string>; protocol: string; curve: string }
const witnesses = new Map<string, Uint8Array>()

beforeAll(async () => {
  const { WitnessCalculatorBuilder } = (await esm("circom_runtime")) as { WitnessCalculatorBuilder: (wasm: Uint8Array) => Promise<Calculator> }
  const cases = await makeCases()
  for (const circuit of CIRCUITS) {
    const calculator = await WitnessCalculatorBuilder(readFileSync(buildFilesOf(circuit).wasm))
    witnesses.set(circuit, await calculator.calculateWTNSBin(cases[circuit]!.inputs, 0))
  }
})
afterAll(async () => {
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } | null }).curve_bn128?.terminate()
})

/** A point of the twist E'(Fq2) that is not in G2, from the twist equation (q ≡ 3 mod 4 square roots in Fq2). */
const pow = (b: bigint, e: bigint, m: bigint) => {
  let r = 1n
  for (let x = mod(b, m), k = e; k > 0n; k >>= 1n, x = (x * x) % m) if (k & 1n) r = (r * x) % m
  return r
}
type F2 = readonly [bigint, bigint]
const f2mul = (a: F2, b: F2): F2 => [mod(a[0] * b[0] - a[1] * b[1], Q), mod(a[0] * b[1] + a[1] * b[0], Q)]
const f2add = (a: F2, b: F2): F2 => [mod(a[0] + b[0], Q), mod(a[1] + b[1], Q)]
const f2inv = (a: F2): F2 => {
  const n = pow(a[0] * a[0] + a[1] * a[1], Q - 2n, Q)
  return [mod(a[0] * n, Q), mod(-a[1] * n, Q)]
}
const f2sqrt = (a: F2): F2 | null => {
  // Candidates a^((q²+7)/16)… are awkward; search the norm route: √(a) = √((n + a0)/2) + a1/(2·that)·u with n = √(a0² + a1²).
  const n = pow(mod(a[0] * a[0] + a[1] * a[1], Q), (Q + 1n) / 4n, Q)
  for (const s of [n, mod(-n, Q)]) {
    const half = mod((a[0] + s) * pow(2n, Q - 2n, Q), Q)
    const x = pow(half, (Q + 1n) / 4n, Q)
    if ((x * x) % Q !== half || x === 0n) continue
    const y = mod(a[1] * pow(2n * x, Q - 2n, Q), Q)
    const r: F2 = [x, y]
    const sq = f2mul(r, r)
    if (sq[0] === mod(a[0], Q) && sq[1] === mod(a[1], Q)) return r
  }
  return null
}
const TWIST_B = f2mul([3n, 0n], f2inv([9n, 1n]))
const twistPointOffG2 = () => {
  for (let n = 1000n; ; n++) {
    const x: F2 = [n, 7n]
    const y = f2sqrt(f2add(f2mul(f2mul(x, x), x), TWIST_B))
    // The twist has r·h points and h > 10⁴: a point found this way is outside G2 but for a chance
    // of about 1/h; the native G2 test (points.test.ts) covers membership exactly.
    if (y !== null) return [[x[0].toString(), x[1].toString()], [y[0].toString(), y[1].toString()], ["1", "0"]]
  }
}

/** Every mutation of a valid proof, by name: each must be refused. */
const mutations = (proof: Proof, signals: ReadonlyArray<string>): ReadonlyArray<readonly [string, Proof, ReadonlyArray<string>]> => {
  const bump = (v: string, m: bigint) => mod(BigInt(v) + 1n, m).toString()
  const out: Array<readonly [string, Proof, ReadonlyArray<string>]> = []
  signals.forEach((_, i) => {
    out.push([`signal ${i} + 1`, proof, signals.map((s, j) => (j === i ? bump(s, R) : s))])
    out.push([`signal ${i} + r`, proof, signals.map((s, j) => (j === i ? (BigInt(s) + R).toString() : s))])
  })
  out.push(["one signal too many", proof, [...signals, "1"]])
  out.push(["π_A and π_C swapped", { ...proof, pi_a: proof.pi_c, pi_c: proof.pi_a }, signals])
  out.push(["π_A negated", { ...proof, pi_a: [proof.pi_a[0]!, mod(-BigInt(proof.pi_a[1]!), Q).toString(), "1"] }, signals])
  out.push(["π_C negated", { ...proof, pi_c: [proof.pi_c[0]!, mod(-BigInt(proof.pi_c[1]!), Q).toString(), "1"] }, signals])
  for (const name of ["pi_a", "pi_c"] as const) {
    for (const k of [0, 1]) out.push([`${name}[${k}] + 1`, { ...proof, [name]: proof[name].map((c, j) => (j === k ? bump(c, Q) : c)) }, signals])
  }
  for (const [i, j] of [[0, 0], [0, 1], [1, 0], [1, 1]] as const) {
    const pi_b = proof.pi_b.map((c, m) => (m === i ? c.map((v, n) => (n === j ? bump(v, Q) : v)) : c))
    out.push([`pi_b[${i}][${j}] + 1`, { ...proof, pi_b }, signals])
  }
  out.push(["π_B on the twist, outside G2", { ...proof, pi_b: twistPointOffG2() }, signals])
  return out
}

describe.skipIf(addon === undefined)("native verifyGroth16 agrees with snarkjs", () => {
  for (const circuit of CIRCUITS) {
    it(`${circuit}: native and snarkjs proofs verify in both; every mutation is refused by both`, async () => {
      const vkey = vkeyOf(circuit)
      const handle = addon!.loadZkey(new Uint8Array(readFileSync(buildFilesOf(circuit).zkey)), { cache: false })
      const keys: Array<VerifyingKeyHandle> = addon!.kernels.map((kernel) => addon!.prepareVerifyingKey(vkey as never, { kernel }))
      const nativeVerify = (proof: unknown, signals: ReadonlyArray<string>) => {
        const answers = keys.map((key) => addon!.verifyGroth16(key, proof as never, signals))
        expect(new Set(answers).size).toBe(1)
        return answers[0]!
      }
      const snarkjsVerify = async (proof: unknown, signals: ReadonlyArray<string>) => {
        try {
          return await snarkjs.groth16.verify(vkey, signals as Array<string>, proof as never)
        } catch {
          return false // how the worker reads a throw: not a valid proof
        }
      }
      const proofs: Array<{ proof: Proof; publicSignals: Array<string> }> = []
      for (let i = 0; i < 3; i++) proofs.push(addon!.prove(handle, witnesses.get(circuit)!) as never)
      proofs.push((await snarkjs.groth16.prove(buildFilesOf(circuit).zkey, witnesses.get(circuit)!)) as never)
      for (const { proof, publicSignals } of proofs) {
        expect(nativeVerify(proof, publicSignals)).toBe(true)
        expect(await snarkjsVerify(proof, publicSignals)).toBe(true)
        for (const [name, p, s] of mutations(proof, publicSignals)) {
          expect({ name, native: nativeVerify(p, s), snarkjs: await snarkjsVerify(p, s) }).toEqual({ name, native: false, snarkjs: false })
        }
      }
      addon!.unloadZkey(handle)
    }, 120_000)
  }
})

describe("the pool's verify (the proof worker's check)", () => {
  it("a valid proof is valid, a tampered one is not, and a malformed one is simply not valid", async () => {
    const circuit = Option.getOrThrow(builtinCircuit("multiplier"))
    const cases = await makeCases()
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const prover = yield* Prover
      const out = yield* prover.prove(circuit, cases["multiplier"]!.inputs)
      expect(yield* prover.verify(circuit, out.proof, out.public_signals)).toBe(true)
      // Twice: the second verify reuses the key the thread prepared.
      expect(yield* prover.verify(circuit, out.proof, out.public_signals)).toBe(true)
      expect(yield* prover.verify(circuit, out.proof, ["34"])).toBe(false)
      expect(yield* prover.verify(circuit, out.proof, [(33n + R).toString()])).toBe(false)
      expect(yield* prover.verify(circuit, { ...out.proof, pi_a: ["1", "3", "1"] } as never, out.public_signals)).toBe(false)
      expect(yield* prover.verify(circuit, { ...out.proof, pi_b: "x" } as never, out.public_signals)).toBe(false)
      // A verification key with a point off the curve verifies nothing (twice: the refusal is kept).
      const broken = { ...circuit, verification_key: { ...(circuit.verification_key as object), vk_alpha_1: ["1", "3", "1"] } }
      expect(yield* prover.verify(broken as never, out.proof, out.public_signals)).toBe(false)
      expect(yield* prover.verify(broken as never, out.proof, out.public_signals)).toBe(false)
      // The same proof with π_A's x written as x + q: snarkjs reduces it and accepts; the native
      // verifier refuses a non-canonical coordinate (one proof, one way to write it).
      const [x, y] = out.proof["pi_a"] as ReadonlyArray<string>
      expect(yield* prover.verify(circuit, { ...out.proof, pi_a: [(BigInt(x!) + Q).toString(), y, "1"] } as never, out.public_signals)).toBe(
        addon === undefined
      )
    }).pipe(Effect.provide(ProverPoolLive({ poolSize: 1, priority: "normal", engine: addon === undefined ? "snarkjs" : "native" }).pipe(
      Layer.provide(ArtifactFilesLive()),
      Layer.provide(Layer.succeed(ArtifactsRepo, artifactsInMap()))
    )))))
  }, 120_000)
})
