/** The test addon: the kernels' arithmetic on plain little-endian values, for tests only. */
export interface NativeTestingAddon {
  /** The kernel `test` uses when none is named, and every kernel this build and CPU have (as the addon's). */
  readonly kernel: string
  readonly kernels: ReadonlyArray<string>
  /**
   * Test entry points for the field, curve, MSM, NTT and pairing arithmetic (plain little-endian
   * values; "pairing.e", "pairing.check", "fq12.mul", "fq12.pow").
   */
  test(op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number>, kernel?: string): Uint8Array
  /**
   * Test entry points for the GPU arithmetic (`native/gpu/`), run on the CPU: the 32-bit-limb
   * fields ("fq.mul", "fr.inv", "fq.tomont", "fq.constants", ...) and Fq2 ("fq2.mul", "fq2.inv",
   * ...), G1 and G2 in XYZZ coordinates ("g1.madd", "g2.add", "g2.dbl", "g2.affine", ...), the MSM
   * schedule ("msm.window", "msm.digits", "msm.buckets", "msm.g1", "msm.g2") and the NTT
   * ("ntt.forward", "ntt.inverse", "ntt.coset", "ntt.tocoset", "ntt.root", "ntt.shift"); plain
   * little-endian values.
   */
  testGpu(op: string, args: ReadonlyArray<Uint8Array>, ints: ReadonlyArray<number>): Uint8Array
}

export type NativeTestingLoad =
  | { readonly ok: true; readonly addon: NativeTestingAddon }
  | { readonly ok: false; readonly reason: string }

/** The test addon, or why it cannot be used (not built: a package has none). Never throws. */
export declare const loadNativeTesting: () => NativeTestingLoad
