// A Groth16 bn128 zkey laid out as snarkjs writes it (iden3 binary sections, coordinates in
// Montgomery form) but made of whatever points a test names, so the point check can be fed points
// off the curve and points of the twist outside G2 anywhere in a key. Its coefficients section is
// empty: such a key is for the point check, not for proving.
import { concat, type F2, le, mod, type Point, Q, R } from "./reference.js"

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
