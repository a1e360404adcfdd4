import type { ErrorDetail } from "@mzk/core"

/** BN254 (snarkjs's `bn128`): the base field's modulus q and the scalar field's r. */
export const BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
export const BN128_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/

/**
 * Whether a point may be the point at infinity. Every point of a proof may: it is an element of the
 * group like any other, and the pairing equation decides (snarkjs does the same). So may a key's
 * commitments to the circuit's polynomials (Groth16's IC, PLONK's Q and S, FFLONK's C0): a
 * selector no gate uses commits to the zero polynomial (PLONK's Qc of any circuit without constant
 * terms), a signal no constraint binds has its IC point there. A setup's secret times a generator
 * (Groth16's α₁ β₂ γ₂ δ₂, the [τ]₂ of PLONK and FFLONK) may not: the secret is never 0, so such a
 * key is corrupt.
 */
export type AtInfinity = "allowed" | "refused"

/** How snarkjs writes a point of each group: its z when affine, the point at infinity. */
const FORMS = {
  G1: { one: "1", infinity: ["0", "1", "0"], affine: '[x, y, "1"]', infinityText: '["0", "1", "0"]' },
  G2: {
    one: ["1", "0"],
    infinity: [["0", "0"], ["1", "0"], ["0", "0"]],
    affine: '[[x0, x1], [y0, y1], ["1", "0"]]',
    infinityText: '[["0", "0"], ["1", "0"], ["0", "0"]]'
  }
} as const
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/** A point as snarkjs writes it: affine decimal coordinates; its path names it in a 400. */
export type PointShape =
  | { readonly group: "G1"; readonly path: string; readonly value: readonly [string, string, string] }
  | { readonly group: "G2"; readonly path: string; readonly value: readonly [readonly [string, string], readonly [string, string], readonly [string, string]] }

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : typeof value

/**
 * Reads untrusted snarkjs JSON field by field, noting each problem with its path (all of them,
 * not only the first) and the points it met, which are checked against the curve only once the
 * whole input is well formed.
 */
export class JsonReader {
  readonly problems: Array<ErrorDetail> = []
  readonly points: Array<PointShape> = []

  problem(path: string, message: string): undefined {
    this.problems.push({ path, message })
    return undefined
  }

  /** The object at `path`, or a problem. */
  object(value: unknown, path: string): Record<string, unknown> | undefined {
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? value as Record<string, unknown>
      : this.problem(path, `must be an object, not ${describe(value)}`)
  }

  /** `protocol` and `curve` as snarkjs names them; absent ones are a problem only where `required`. */
  names(object: Record<string, unknown>, path: string, protocol: string, required: boolean): void {
    for (const [field, expected] of [["protocol", protocol], ["curve", "bn128"]] as const) {
      const value = object[field]
      if (value === undefined && !required) continue
      if (value !== expected) {
        this.problem(`${path}.${field}`, `must be ${JSON.stringify(expected)}${typeof value === "string" ? `, not ${JSON.stringify(value.slice(0, 40))}` : ""}`)
      }
    }
  }

  /** An integer in [min, max] (a JSON number, as snarkjs writes `nPublic` and `power`). */
  int(object: Record<string, unknown>, field: string, path: string, min: number, max: number): number | undefined {
    const value = object[field]
    return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max
      ? value
      : this.problem(`${path}.${field}`, `must be an integer from ${min} to ${max}`)
  }

  /** A canonical decimal element of the field below `modulus`. */
  element(value: unknown, path: string, modulus: bigint, what: string): string | undefined {
    if (typeof value !== "string" || !DECIMAL.test(value)) return this.problem(path, `must be a decimal string (${what})`)
    return BigInt(value) < modulus ? value : this.problem(path, `is not a canonical ${what}: it is not below the field's modulus`)
  }

  /** A scalar (an element of the scalar field r): evaluations, challenges' roots, `k1`… */
  scalar(object: Record<string, unknown>, field: string, path: string): string | undefined {
    return this.element(object[field], `${path}.${field}`, BN128_R, "scalar field element")
  }

  private coordinates(value: unknown, path: string, length: number, read: (item: unknown, at: string) => unknown): Array<unknown> | undefined {
    if (!Array.isArray(value) || value.length !== length) return this.problem(path, `must be an array of ${length}`)
    const items = value.map((item, i) => read(item, `${path}.${i}`))
    return items.some((item) => item === undefined) ? undefined : items
  }

  /**
   * A G1 point as snarkjs writes it: `[x, y, "1"]`, coordinates canonical below q (its curve check
   * comes later), or the point at infinity `["0", "1", "0"]` where `atInfinity` allows it.
   */
  g1(object: Record<string, unknown>, field: string, path: string, atInfinity: AtInfinity): void {
    this.g1At(object[field], `${path}.${field}`, atInfinity)
  }

  g1At(value: unknown, path: string, atInfinity: AtInfinity): void {
    const xyz = this.coordinates(value, path, 3, (item, at) => this.element(item, at, BN128_Q, "base field element"))
    if (xyz === undefined) return
    if (this.affine("G1", xyz, path, atInfinity)) this.points.push({ group: "G1", path, value: xyz as [string, string, string] })
  }

  /**
   * A G2 point as snarkjs writes it: `[[x0, x1], [y0, y1], ["1", "0"]]`, coordinates canonical
   * below q, or the point at infinity `[["0", "0"], ["1", "0"], ["0", "0"]]` where allowed.
   */
  g2(object: Record<string, unknown>, field: string, path: string, atInfinity: AtInfinity): void {
    const at = `${path}.${field}`
    const xyz = this.coordinates(object[field], at, 3, (pair, pairPath) =>
      this.coordinates(pair, pairPath, 2, (item, itemPath) => this.element(item, itemPath, BN128_Q, "base field element")))
    if (xyz === undefined) return
    if (this.affine("G2", xyz, at, atInfinity)) {
      this.points.push({ group: "G2", path: at, value: xyz as [[string, string], [string, string], [string, string]] })
    }
  }

  /**
   * Whether the point read is affine (z one), to be checked on the curve; otherwise it is the point
   * at infinity where that is allowed, or a problem is noted.
   */
  private affine(group: "G1" | "G2", xyz: ReadonlyArray<unknown>, path: string, atInfinity: AtInfinity): boolean {
    const form = FORMS[group]
    if (sameJson(xyz[2], form.one)) {
      // ffjavascript, which checks the curve, stores infinity as the affine (0, 0): it must not see one.
      if (xyz.slice(0, 2).flat().every((c) => c === "0")) {
        this.problem(path, `is not on the curve: (0, 0) is not a point of it (snarkjs writes the point at infinity ${form.infinityText})`)
        return false
      }
      return true
    }
    if (!sameJson(xyz, form.infinity)) {
      this.problem(
        path,
        atInfinity === "allowed"
          ? `must be an affine point ${form.affine} or the point at infinity ${form.infinityText}, as snarkjs writes them`
          : `must be an affine point ${form.affine}, as snarkjs writes it`
      )
    } else if (atInfinity === "refused") {
      this.problem(path, "is the point at infinity, which no setup makes (its secret is never 0): the key is corrupt")
    }
    return false
  }

  /** Public signals: exactly `count`, each a canonical scalar. */
  signals(signals: ReadonlyArray<string>, count: number): void {
    if (signals.length !== count) {
      this.problem("public_signals", `the key takes ${count} public signal${count === 1 ? "" : "s"}, not ${signals.length}`)
      return
    }
    signals.forEach((signal, i) => this.element(signal, `public_signals.${i}`, BN128_R, "scalar field element"))
  }
}
