import type { ErrorDetail } from "@mzk/core"

/** BN254 (snarkjs's `bn128`): the base field's modulus q and the scalar field's r. */
export const BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
export const BN128_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/

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

  /** A G1 point `[x, y, "1"]`, coordinates canonical below q; its curve check comes later. */
  g1(object: Record<string, unknown>, field: string, path: string): void {
    this.g1At(object[field], `${path}.${field}`)
  }

  g1At(value: unknown, path: string): void {
    const xy = this.coordinates(value, path, 3, (item, at) => this.element(item, at, BN128_Q, "base field element"))
    if (xy === undefined) return
    if (xy[2] !== "1") return void this.problem(path, "must be an affine point [x, y, \"1\"], as snarkjs writes it")
    this.points.push({ group: "G1", path, value: xy as [string, string, string] })
  }

  /** A G2 point `[[x0, x1], [y0, y1], ["1", "0"]]`, coordinates canonical below q. */
  g2(object: Record<string, unknown>, field: string, path: string): void {
    const at = `${path}.${field}`
    const xyz = this.coordinates(object[field], at, 3, (pair, pairPath) =>
      this.coordinates(pair, pairPath, 2, (item, itemPath) => this.element(item, itemPath, BN128_Q, "base field element")))
    if (xyz === undefined) return
    const [, , z] = xyz as [[string, string], [string, string], [string, string]]
    if (z[0] !== "1" || z[1] !== "0") return void this.problem(at, "must be an affine point [[x0, x1], [y0, y1], [\"1\", \"0\"]], as snarkjs writes it")
    this.points.push({ group: "G2", path: at, value: xyz as [[string, string], [string, string], [string, string]] })
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
