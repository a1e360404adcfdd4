// Types for zkeyPoints.mjs (plain JS so the build job, a bare node process, can load it).
import type { NativeProverAddon, PointCount } from "@mzk/prover-native"

export declare function checkZkeyPoints(
  bytes: Uint8Array,
  options?: { readonly addon?: NativeProverAddon | undefined; readonly threads?: number }
): Promise<PointCount>
export declare function checkZkeyPointsJs(bytes: Uint8Array, curve?: unknown): Promise<PointCount>
