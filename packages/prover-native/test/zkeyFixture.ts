// A Groth16 bn128 zkey laid out as snarkjs writes it (iden3 binary sections, coordinates in
// Montgomery form) but made of whatever points a test names, so the point check can be fed points
// off the curve and points of the twist outside G2 anywhere in a key. Its coefficients section is
// empty: such a key is for the point check, not for proving.
import fc from "fast-check"
import { concat, type F2, G1, G2, G2_COFACTOR, le, mod, type Point, Q, R, twistPoint } from "./reference.js"

/** Every point section of a key; nVars = a.length, nPublic = ic.length - 1, domainSize = h.length. */
export interface ZkeyPoints {
  readonly alpha1: Point<bigint>
  readonly beta1: Point<bigint>
  readonly beta2: Point<F2>
  readonly gamma2: Point<F2>
  readonly delta1: Point<bigint>
  readonly delta2: Point<F2>
  readonly ic: ReadonlyArray<Point<bigint>>
  readonly a: ReadonlyArray<Point<bigint>>
  readonly b1: ReadonlyArray<Point<bigint>>
  readonly b2: ReadonlyArray<Point<F2>>
  readonly c: ReadonlyArray<Point<bigint>>
  readonly h: ReadonlyArray<Point<bigint>>
}

const MONTGOMERY = mod(1n << 256n, Q)
/** A coordinate as the zkey stores it: x·2^256 mod q, little-endian. */
const coordinate = (x: bigint) => le(mod(x * MONTGOMERY, Q))
export const zkeyG1 = (p: Point<bigint>) => (p === null ? new Uint8Array(64) : concat([coordinate(p.x), coordinate(p.y)]))
export const zkeyG2 = (p: Point<F2>) =>
  p === null ? new Uint8Array(128) : concat([coordinate(p.x[0]), coordinate(p.x[1]), coordinate(p.y[0]), coordinate(p.y[1])])

const u32 = (n: number) => {
  const out = new Uint8Array(4)
  new DataView(out.buffer).setUint32(0, n, true)
  return out
}
const section = (type: number, body: Uint8Array) => {
  const head = new Uint8Array(12)
  const view = new DataView(head.buffer)
  view.setUint32(0, type, true)
  view.setBigUint64(4, BigInt(body.length), true)
  return concat([head, body])
}

export const zkeyOf = (p: ZkeyPoints): Uint8Array => {
  const nVars = p.a.length
  const nPublic = p.ic.length - 1
  if (p.b1.length !== nVars || p.b2.length !== nVars || p.c.length !== nVars - nPublic - 1) throw new Error("zkeyOf: inconsistent sections")
  const header = concat([
    u32(32), le(Q), u32(32), le(R), u32(nVars), u32(nPublic), u32(p.h.length),
    zkeyG1(p.alpha1), zkeyG1(p.beta1), zkeyG2(p.beta2), zkeyG2(p.gamma2), zkeyG1(p.delta1), zkeyG2(p.delta2)
  ])
  const sections = [
    section(1, u32(1)),
    section(2, header),
    section(3, concat(p.ic.map(zkeyG1))),
    section(4, u32(0)),
    section(5, concat(p.a.map(zkeyG1))),
    section(6, concat(p.b1.map(zkeyG1))),
    section(7, concat(p.b2.map(zkeyG2))),
    section(8, concat(p.c.map(zkeyG1))),
    section(9, concat(p.h.map(zkeyG1))),
    section(10, new Uint8Array(68))
  ]
  return concat([new TextEncoder().encode("zkey"), u32(1), u32(sections.length), ...sections])
}

/** The byte offset of point `index` of `sectionType` in a key made by `zkeyOf` (or snarkjs). */
export const pointOffset = (zkey: Uint8Array, sectionType: number, index: number, size: number) => {
  const view = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength)
  let pos = 12
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const type = view.getUint32(pos, true)
    const length = Number(view.getBigUint64(pos + 4, true))
    if (type === sectionType) return pos + 12 + index * size
    pos += 12 + length
  }
  throw new Error(`no section ${sectionType}`)
}

/** A G1 point with its x stored non-canonically: the same residue plus q (the file's value is then ≥ q). */
export const nonCanonicalG1 = (p: { readonly x: bigint; readonly y: bigint }) =>
  concat([le(mod(p.x * MONTGOMERY, Q) + Q), coordinate(p.y)])

export const g1 = (k: bigint) => G1.mul(G1.generator, k)
export const g2 = (k: bigint) => G2.mul(G2.generator, k)

/** A valid key of 6 variables, 1 public signal and a domain of 8, its points distinct multiples of the generators. */
export const VALID_KEY: ZkeyPoints = {
  alpha1: g1(11n), beta1: g1(12n), beta2: g2(13n), gamma2: G2.generator, delta1: g1(14n), delta2: g2(15n),
  ic: [g1(21n), g1(22n)],
  a: [g1(31n), g1(32n), null, g1(34n), g1(35n), g1(36n)],
  b1: [g1(41n), null, g1(43n), g1(44n), g1(45n), g1(46n)],
  b2: [g2(51n), null, g2(53n), g2(54n), g2(55n), g2(56n)],
  c: [g1(61n), g1(62n), g1(63n), g1(64n)],
  h: [g1(71n), g1(72n), g1(73n), g1(74n), g1(75n), g1(76n), g1(77n), g1(78n)]
}
export const VALID_COUNT = { g1: 3 + 2 + 6 + 6 + 4 + 8, g2: 3 + 6 }

/** Points of the twist, found from x = (n, 7): most lie outside G2 (the twist's order is r·h). */
export const twistPoints = (count: number, from: bigint) => {
  const out: Array<NonNullable<Point<F2>>> = []
  for (let n = from; out.length < count; n++) {
    const p = twistPoint([n, 7n])
    if (p !== null) out.push(p)
  }
  return out
}
/** The primes of the twist's cofactor h = 10069 · 5864401 · 1875725156269 · p₄ but the last. */
const SMALL_PRIMES = [10069n, 5864401n, 1875725156269n]
/** A point of order p (or infinity) for a prime p dividing h: r·(h/p) times a point of the twist. */
const torsion = (p: bigint, from: Point<F2>) => G2.mul(from, R * (G2_COFACTOR / p))
const [SEED_POINT] = twistPoints(1, 3n)
/** One point of each prime order dividing h. */
export const TORSION = [...SMALL_PRIMES, G2_COFACTOR / (SMALL_PRIMES[0]! * SMALL_PRIMES[1]! * SMALL_PRIMES[2]!)].map((p) => {
  const t = torsion(p, SEED_POINT!)
  if (t === null || G2.mul(t, p) !== null) throw new Error(`no point of order ${p} from the seed point`)
  return t
})

/** A B2 candidate: in G2, anywhere on the twist, in G2 plus a small-order point, or infinity. */
export const g2Candidate: fc.Arbitrary<Point<F2>> = fc.oneof(
  fc.bigInt({ min: 1n, max: R - 1n }).map(g2),
  fc.bigInt({ min: 100n, max: 1n << 64n }).map((n) => twistPoints(1, n)[0]!),
  fc.tuple(fc.bigInt({ min: 1n, max: R - 1n }), fc.constantFrom(...TORSION)).map(([k, t]) => G2.add(g2(k), t)),
  fc.constant(null)
)
