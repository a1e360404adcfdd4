// Small circom-shaped circuits written straight as `.r1cs` files, with their `.wtns` witnesses, so
// the setup tests need no compiler: wire 0 is the constant 1, then the public outputs, the public
// inputs, the private inputs and the intermediate wires, as circom numbers them. Each intermediate
// is (a·x + c)·(b·y) of two earlier wires with random coefficients; each output copies one.
import { concat, le, mod, R } from "./reference.js"

export interface Circuit {
  readonly nOut: number
  readonly nPubIn: number
  readonly nPrvIn: number
  /** Intermediate multiplications (constraints = this + nOut). */
  readonly nMul: number
}

type Term = readonly [wire: number, coef: bigint]
type Constraint = readonly [a: ReadonlyArray<Term>, b: ReadonlyArray<Term>, c: ReadonlyArray<Term>]

const u32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer)
const u64 = (n: number) => new Uint8Array(new BigUint64Array([BigInt(n)]).buffer)
const section = (type: number, body: Uint8Array) => concat([u32(type), u64(body.length), body])
const binFile = (magic: string, version: number, sections: ReadonlyArray<Uint8Array>) =>
  concat([new TextEncoder().encode(magic), u32(version), u32(sections.length), ...sections])

/** A deterministic pseudo-random field element stream (the circuits need not be secret, only varied). */
const stream = (seed: number) => {
  let s = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n
  return () => {
    s = mod(s * 6364136223846793005n + 1442695040888963407n, 1n << 64n)
    return mod(s * (s + 0x1234567n) * (s ^ 0xabcdefn), R)
  }
}

export interface Built {
  readonly r1cs: Uint8Array
  readonly wtns: Uint8Array
  readonly nWires: number
  readonly nConstraints: number
  /** The public signals a proof must show: outputs, then public inputs. */
  readonly publicSignals: ReadonlyArray<string>
}

/**
 * `droppedInputs` private inputs more in the header than among the wires, as circom --O2 writes
 * circuits with inputs no constraint uses.
 */
export const buildCircuit = (circuit: Circuit, seed: number, options: { readonly prime?: bigint; readonly droppedInputs?: number } = {}): Built => {
  const next = stream(seed)
  const nInputs = circuit.nPubIn + circuit.nPrvIn
  const firstInput = 1 + circuit.nOut
  const firstMul = firstInput + nInputs
  const nWires = firstMul + circuit.nMul
  const values: Array<bigint> = new Array<bigint>(nWires).fill(0n)
  values[0] = 1n
  for (let i = 0; i < nInputs; i++) values[firstInput + i] = next()
  const constraints: Array<Constraint> = []
  const pick = (limit: number) => Number(next() % BigInt(limit))
  for (let k = 0; k < circuit.nMul; k++) {
    const w = firstMul + k
    // Earlier wires only: inputs and previous intermediates (or the constant, when there are none).
    const earlier = () => (w - firstInput === 0 ? 0 : firstInput + pick(w - firstInput))
    const x = earlier(), y = earlier()
    const [a, c, b] = [next(), next(), next()]
    values[w] = mod((a * values[x]! + c) * (b * values[y]!), R)
    constraints.push([[[x, a], [0, c]], [[y, b]], [[w, 1n]]])
  }
  for (let o = 0; o < circuit.nOut; o++) {
    const from = circuit.nMul > 0 ? firstMul + pick(circuit.nMul) : firstInput + pick(Math.max(1, nInputs))
    values[1 + o] = values[from]!
    constraints.push([[[from, 1n]], [[0, 1n]], [[1 + o, 1n]]])
  }
  const prime = options.prime ?? R
  const lc = (terms: ReadonlyArray<Term>) => concat([u32(terms.length), ...terms.flatMap(([w, c]) => [u32(w), le(c)])])
  const header = concat([u32(32), le(prime), u32(nWires), u32(circuit.nOut), u32(circuit.nPubIn), u32(circuit.nPrvIn + (options.droppedInputs ?? 0)), u64(nWires), u32(constraints.length)])
  const body = concat(constraints.map(([a, b, c]) => concat([lc(a), lc(b), lc(c)])))
  const labels = concat(values.map((_, i) => u64(i)))
  const r1cs = binFile("r1cs", 1, [section(1, header), section(2, body), section(3, labels)])
  const wtns = binFile("wtns", 2, [section(1, concat([u32(32), le(R), u32(nWires)])), section(2, concat(values.map(le)))])
  const nPublic = circuit.nOut + circuit.nPubIn
  return { r1cs, wtns, nWires, nConstraints: constraints.length, publicSignals: values.slice(1, 1 + nPublic).map(String) }
}

export { binFile, section, u32, u64 }
