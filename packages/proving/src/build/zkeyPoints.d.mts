// Types for zkeyPoints.mjs (plain JS so the build job, a bare node process, can load it).
import type { NativeProverAddon, PointCount } from "@mzk/prover-native"

export declare function checkZkeyPoints(
  bytes: Uint8Array,
  options?: { readonly addon?: NativeProverAddon | undefined; readonly threads?: number }
): Promise<PointCount>
export declare function checkZkeyPointsJs(bytes: Uint8Array, curve?: unknown): Promise<PointCount>

/** A point check's answer: undefined, or what is wrong with the point. */
export type PointCheck = (point: Uint8Array) => string | undefined
export declare function pointChecks(curve: unknown, subject?: string): { readonly g1Problem: PointCheck; readonly g2Problem: PointCheck }
