// An independent BigInt reference for BN254 (fields, Fq2, G1, G2 in affine coordinates, naive
// MSM and DFT), written for the tests from the textbook definitions: slow and obviously right.

export const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
export const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

export const mod = (a: bigint, m: bigint) => ((a % m) + m) % m
export const pow = (b: bigint, e: bigint, m: bigint) => {
  let r = 1n
  let x = mod(b, m)
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) r = (r * x) % m
    x = (x * x) % m
  }
  return r
}
/** Extended Euclid; 0 has no inverse and maps to 0 (as the native code does). */
export const inv = (a: bigint, m: bigint) => {
  let [r0, r1, s0, s1] = [mod(a, m), m, 1n, 0n]
  if (r0 === 0n) return 0n
  while (r1 !== 0n) {
    const q = r0 / r1
    ;[r0, r1] = [r1, r0 - q * r1]
    ;[s0, s1] = [s1, s0 - q * s1]
  }
  return mod(s0, m)
}

/** Fq2 = Fq[u]/(u² + 1) as [c0, c1]. */
export type F2 = readonly [bigint, bigint]
export const f2 = {
  add: (a: F2, b: F2): F2 => [mod(a[0] + b[0], Q), mod(a[1] + b[1], Q)],
  sub: (a: F2, b: F2): F2 => [mod(a[0] - b[0], Q), mod(a[1] - b[1], Q)],
  mul: (a: F2, b: F2): F2 => [mod(a[0] * b[0] - a[1] * b[1], Q), mod(a[0] * b[1] + a[1] * b[0], Q)],
  neg: (a: F2): F2 => [mod(-a[0], Q), mod(-a[1], Q)],
  inv: (a: F2): F2 => {
    const t = inv(a[0] * a[0] + a[1] * a[1], Q)
    return [mod(a[0] * t, Q), mod(-a[1] * t, Q)]
  },
  eq: (a: F2, b: F2) => a[0] === b[0] && a[1] === b[1],
  zero: [0n, 0n] as F2,
  one: [1n, 0n] as F2
}

/** A field for the generic curve code: G1 over Fq, G2 over Fq2. */
interface Field<T> {
  add(a: T, b: T): T
  sub(a: T, b: T): T
  mul(a: T, b: T): T
  inv(a: T): T
  neg(a: T): T
  eq(a: T, b: T): boolean
  zero: T
  fromInt(n: bigint): T
}
const fq: Field<bigint> = {
  add: (a, b) => mod(a + b, Q),
  sub: (a, b) => mod(a - b, Q),
  mul: (a, b) => mod(a * b, Q),
  inv: (a) => inv(a, Q),
  neg: (a) => mod(-a, Q),
  eq: (a, b) => a === b,
  zero: 0n,
  fromInt: (n) => mod(n, Q)
}
const fq2: Field<F2> = { ...f2, fromInt: (n) => [mod(n, Q), 0n] }

/** An affine point, or null for infinity. */
export type Point<T> = { readonly x: T; readonly y: T } | null

export interface Curve<T> {
  readonly F: Field<T>
  readonly b: T
  readonly generator: Point<T>
  onCurve(p: Point<T>): boolean
  add(p: Point<T>, q: Point<T>): Point<T>
  neg(p: Point<T>): Point<T>
  mul(p: Point<T>, k: bigint): Point<T>
  msm(points: ReadonlyArray<Point<T>>, scalars: ReadonlyArray<bigint>): Point<T>
}

const makeCurve = <T>(F: Field<T>, b: T, generator: Point<T>): Curve<T> => {
  const onCurve = (p: Point<T>) => p === null || F.eq(F.mul(p.y, p.y), F.add(F.mul(F.mul(p.x, p.x), p.x), b))
  const neg = (p: Point<T>): Point<T> => (p === null ? null : { x: p.x, y: F.neg(p.y) })
  const add = (p: Point<T>, q: Point<T>): Point<T> => {
    if (p === null) return q
    if (q === null) return p
    let lambda: T
    if (F.eq(p.x, q.x)) {
      if (!F.eq(p.y, q.y) || F.eq(p.y, F.zero)) return null
      const xx = F.mul(p.x, p.x)
      lambda = F.mul(F.add(F.add(xx, xx), xx), F.inv(F.add(p.y, p.y)))
    } else {
      lambda = F.mul(F.sub(q.y, p.y), F.inv(F.sub(q.x, p.x)))
    }
    const x = F.sub(F.sub(F.mul(lambda, lambda), p.x), q.x)
    return { x, y: F.sub(F.mul(lambda, F.sub(p.x, x)), p.y) }
  }
  const mul = (p: Point<T>, k: bigint): Point<T> => {
    let r: Point<T> = null
    let a = p
    for (let e = k; e > 0n; e >>= 1n) {
      if (e & 1n) r = add(r, a)
      a = add(a, a)
    }
    return r
  }
  const msm = (points: ReadonlyArray<Point<T>>, scalars: ReadonlyArray<bigint>) =>
    points.reduce<Point<T>>((acc, p, i) => add(acc, mul(p, scalars[i]!)), null)
  return { F, b, generator, onCurve, add, neg, mul, msm }
}

export const G1 = makeCurve(fq, 3n, { x: 1n, y: 2n })
export const G2 = makeCurve(fq2, f2.mul([3n, 0n], f2.inv([9n, 1n])), {
  x: [
    10857046999023057135944570762232829481370756359578518086990519993285655852781n,
    11559732032986387107991004021392285783925812861821192530917403151452391805634n
  ],
  y: [
    8495653923123431417604973247489272438418190587263600148770280649306958101930n,
    4082367875863433681332203403145435568316851327593401208105741076214120093531n
  ]
})

/** Order of the twist E'(Fq2) over r: 2q − r = 10069 · 5864401 · 1875725156269 · (a 178-bit prime). */
/** n distinct points in arithmetic progression (a, a + d, a + 2d, …): MSM bases without scalar multiplications. */
export const progression = <T>(curve: Curve<T>, n: number): Array<Point<T>> => {
  const step = curve.mul(curve.generator, 1234567n)
  const points: Array<Point<T>> = []
  let p = curve.mul(curve.generator, 987654321987654321n)
  for (let i = 0; i < n; i++) {
    points.push(p)
    p = curve.add(p, step)
  }
  return points
}

export const G2_COFACTOR = 2n * Q - R

/** √a in Fq (q ≡ 3 mod 4), or null when a is not a square. */
export const sqrtFq = (a: bigint): bigint | null => {
  const s = pow(a, (Q + 1n) / 4n, Q)
  return (s * s) % Q === mod(a, Q) ? s : null
}

/** √a in Fq2 = Fq[u]/(u² + 1) by the norm: a is a square iff its norm a0² + a1² is one in Fq. */
export const sqrtF2 = (a: F2): F2 | null => {
  const check = (x: F2) => (f2.eq(f2.mul(x, x), a) ? x : null)
  if (a[1] === 0n) {
    const s = sqrtFq(a[0])
    if (s !== null) return [s, 0n]
    const t = sqrtFq(mod(-a[0], Q))
    return t === null ? null : check([0n, t])
  }
  const norm = sqrtFq(mod(a[0] * a[0] + a[1] * a[1], Q))
  if (norm === null) return null
  const half = inv(2n, Q)
  for (const delta of [mod((a[0] + norm) * half, Q), mod((a[0] - norm) * half, Q)]) {
    const x0 = sqrtFq(delta)
    if (x0 !== null && x0 !== 0n) return check([x0, mod(a[1] * inv(2n * x0, Q), Q)])
  }
  return null
}

/** The point of the twist with this x (and the y of √'s choice), or null when there is none. */
export const twistPoint = (x: F2): Point<F2> => {
  const y = sqrtF2(f2.add(f2.mul(f2.mul(x, x), x), G2.b))
  return y === null ? null : { x, y }
}

/** Membership in G2 by its definition: r·P is the point at infinity. */
export const inG2 = (p: Point<F2>) => G2.onCurve(p) && G2.mul(p, R) === null

/** A primitive 2^k-th root of unity in Fr the way snarkjs picks it: (5^t)^(2^(28-k)), r - 1 = 2^28·t. */
export const rootOfUnity = (k: number) => pow(pow(5n, (R - 1n) >> 28n, R), 1n << BigInt(28 - k), R)

/** Naive DFT over Fr: out[j] = Σ a[i]·w^(ij). */
export const dft = (a: ReadonlyArray<bigint>, w: bigint) =>
  a.map((_, j) => a.reduce((s, ai, i) => mod(s + ai * pow(w, BigInt(i * j), R), R), 0n))

// --- byte encodings of the addon's test entry points (plain little-endian, 32 bytes a value) ---

export const le = (x: bigint) => {
  const out = new Uint8Array(32)
  let v = x
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn)
    v >>= 8n
  }
  return out
}
export const fromLe = (b: Uint8Array, offset = 0) => {
  let v = 0n
  for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(b[offset + i]!)
  return v
}
export const concat = (parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}
export const encodeG1 = (p: Point<bigint>) => (p === null ? new Uint8Array(64) : concat([le(p.x), le(p.y)]))
export const decodeG1 = (b: Uint8Array, o = 0): Point<bigint> => {
  const x = fromLe(b, o)
  const y = fromLe(b, o + 32)
  return x === 0n && y === 0n ? null : { x, y }
}
export const encodeG2 = (p: Point<F2>) => (p === null ? new Uint8Array(128) : concat([le(p.x[0]), le(p.x[1]), le(p.y[0]), le(p.y[1])]))
export const decodeG2 = (b: Uint8Array, o = 0): Point<F2> => {
  const x: F2 = [fromLe(b, o), fromLe(b, o + 32)]
  const y: F2 = [fromLe(b, o + 64), fromLe(b, o + 96)]
  return x[0] === 0n && x[1] === 0n && y[0] === 0n && y[1] === 0n ? null : { x, y }
}
