// Types for developmentSetup.mjs (plain JS so the build job, a bare node process, can load it).
import type { DevelopmentSetup, DevelopmentSetupOptions, NativeProverAddon } from "@mzk/prover-native"

export declare function nativeDevelopmentSetup(): NativeProverAddon | undefined
export declare function hashToG2With(ff: unknown, curve: unknown): (transcript: Uint8Array) => Uint8Array
export declare function setUpDevelopmentKey(
  addon: NativeProverAddon,
  r1csPath: string,
  zkeyPath: string,
  options?: Omit<DevelopmentSetupOptions, "hashToG2">
): Promise<DevelopmentSetup>
