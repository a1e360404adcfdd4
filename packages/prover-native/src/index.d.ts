/** An opaque handle to a parsed proving key held in native memory (shared by every thread of the process). */
export interface ZkeyHandle {
  readonly __brand: "mzk/prover-native/ZkeyHandle"
}

/** A Groth16 proof in snarkjs's JSON form: affine coordinates as decimal strings, plus the projective "1". */
export interface Groth16Proof {
  readonly pi_a: readonly [string, string, string]
  readonly pi_b: readonly [readonly [string, string], readonly [string, string], readonly [string, string]]
  readonly pi_c: readonly [string, string, string]
  readonly protocol: "groth16"
  readonly curve: "bn128"
}

/** An opaque handle to a checked, prepared Groth16 verification key held in native memory. */
export interface VerifyingKeyHandle {
  readonly __brand: "mzk/prover-native/VerifyingKeyHandle"
}

/** snarkjs's verification_key.json for a bn128 Groth16 circuit (the fields the verifier reads). */
export interface Groth16VerificationKey {
  readonly protocol: "groth16"
  readonly curve: "bn128"
  readonly nPublic?: number
  readonly vk_alpha_1: ReadonlyArray<string>
  readonly vk_beta_2: ReadonlyArray<ReadonlyArray<string>>
  readonly vk_gamma_2: ReadonlyArray<ReadonlyArray<string>>
  readonly vk_delta_2: ReadonlyArray<ReadonlyArray<string>>
  readonly IC: ReadonlyArray<ReadonlyArray<string>>
}

export interface ProveResult {
  readonly proof: Groth16Proof
  /** Public signals in circuit order (witness values 1..nPublic), decimal strings. */
  readonly publicSignals: ReadonlyArray<string>
  /** With `timings: true`: milliseconds per phase. */
  readonly timings?: Readonly<Record<"witness" | "abc" | "ntt" | "msmA" | "msmB1" | "msmB2" | "msmC" | "msmH" | "finish", number>>
}

export interface LoadOptions {
  /** Threads that build the precomputed tables (default 1). */
  readonly threads?: number
  /** Most memory the precomputed MSM tables of this key may take, MiB (default 1024). */
  readonly tableBudgetMB?: number
  /** "generic" or "adx" (default: adx where the CPU has BMI2 and ADX; MZK_NATIVE_KERNEL overrides). */
  readonly kernel?: string
  /** Share one parsed copy per process for identical bytes and options (default true). */
  readonly cache?: boolean
  /**
   * The bytes' name in that cache instead of their (fast, not collision-resistant) content hash:
   * pass their SHA-256 where keys come from untrusted uploads, so a crafted key can never be served
   * for another. The caller vouches that equal names mean equal bytes.
   */
  readonly cacheKey?: string
  /** Tuning and tests: a fixed digit width (2..15) and number of precomputed copies. */
  readonly forceC?: number
  readonly forceCopies?: number
  /**
   * Most memory this key may hold in all, MiB (default: no ceiling but tableBudgetMB): resident
   * sections + the MSMs' bases + extra shifted copies + proofsInFlight × one proof's scratch (the
   * formula is in the README, "Memory and sharing"). Extra copies get what is left; a key whose
   * bases and scratch alone do not fit is refused with MZK_OUT_OF_MEMORY.
   */
  readonly memoryBudgetMB?: number
  /**
   * A key whose bases and scratch alone exceed memoryBudgetMB: "refuse" (MZK_OUT_OF_MEMORY, the
   * default) or "least" (loaded anyway with one copy of its bases, zkeyInfo's overBudget true).
   */
  readonly overBudget?: "refuse" | "least"
  /** Proofs of this key that may run at once, for the scratch term of the budget (default 1). */
  readonly proofsInFlight?: number
  /**
   * A directory for the tables' disk cache (by the key's SHA-256, kernel, layout and plan): a table
   * file found there is mapped read-only (checked by its SHA-256) instead of built; a built table
   * is written there. Off when absent.
   */
  readonly tableCacheDir?: string
  /** Most bytes of table files kept in tableCacheDir, MiB, least recently used deleted first (default 4096). */
  readonly tableCacheMaxMB?: number
}

export interface ProveOptions {
  /** Threads for this one proof (default 1). */
  readonly threads?: number
  /** Cooperative cancellation: proving stops with code MZK_CANCELLED once element 0 is nonzero. */
  readonly cancel?: Int32Array
  readonly timings?: boolean
}

export interface ZkeyInfo {
  readonly kernel: string
  readonly nVars: number
  readonly nPublic: number
  readonly domainSize: number
  readonly tableBytes: number
  /** Of tableBytes, those mapped from the table cache (the rest were built in this process). */
  readonly tableBytesMapped: number
  /** Held besides the tables (coefficients, twiddles, δ tables), and one proof's scratch at most. */
  readonly residentBytes: number
  readonly scratchBytes: number
  /** What the table cache did: "off", "built" (no file, none written), "written", "mapped", "rebuilt" (a bad file deleted), "unwritable". */
  readonly tableCache: string
  /** Loaded with one copy of its bases although even that exceeds memoryBudgetMB (overBudget "least"). */
  readonly overBudget: boolean
  readonly msm: Readonly<Record<"A" | "B1" | "B2" | "C" | "H", { readonly c: number; readonly copies: number; readonly rounds: number }>>
}

/** What phase2NewZkey wrote: the circuit's sizes and snarkjs's circuit hash (BLAKE2b-512). */
export interface Phase2Info {
  readonly csHash: Buffer
  readonly nVars: number
  readonly nPublic: number
  readonly nConstraints: number
  readonly domainSize: number
  /** The ptau's power. */
  readonly power: number
  /** The zkey's size in bytes. */
  readonly bytes: number
}

export interface PointCount {
  readonly g1: number
  readonly g2: number
}

export interface MemoryStats {
  readonly zkeys: number
  readonly tableBytes: number
  /** Of tableBytes: mapped read-only from the table cache (shared with other processes) / built here. */
  readonly tableBytesMapped: number
  readonly tableBytesBuilt: number
}

/**
 * The addon. Every failure is thrown as an Error with a `code`: MZK_INVALID_INPUT (malformed or
 * mismatched zkey / witness / arguments), MZK_CANCELLED, MZK_OUT_OF_MEMORY, MZK_DIGEST_MISMATCH and MZK_IO
 * (loadZkeyFile), MZK_INTERNAL.
 */
export interface NativeProverAddon {
  /** The arithmetic kernel in use: "adx" (BMI2 + ADX) or "generic" (portable). */
  readonly kernel: string
  readonly kernels: ReadonlyArray<string>
  /** Parses and checks a snarkjs Groth16 bn128 `.zkey` and builds its MSM tables. */
  loadZkey(zkey: Uint8Array, options?: LoadOptions): ZkeyHandle
  /**
   * As `loadZkey`, from a file the addon maps itself (nothing of the key passes through JavaScript),
   * named in the per-process cache by its SHA-256: a key already loaded is shared without reading
   * the file; a file read is hashed first and refused with MZK_DIGEST_MISMATCH when it does not hold
   * the bytes of `sha256`. A file that cannot be opened or mapped is MZK_IO.
   */
  loadZkeyFile(path: string, options: Omit<LoadOptions, "cacheKey"> & { readonly sha256: string }): ZkeyHandle
  /**
   * SHA-256 of `bytes`, lowercase hex: the digest `loadZkeyFile` checks a file against. Through the
   * CPU's SHA extensions where it has them; `portable` (for tests) computes it without them.
   */
  sha256(bytes: Uint8Array, portable?: boolean): string
  /**
   * Lets go of the handle's key now rather than at garbage collection. The key (and its tables) is
   * freed once no other handle, in any thread, and no proof in flight holds it. Every later use of
   * the handle throws MZK_INVALID_INPUT; unloading it again does nothing.
   */
  unloadZkey(zkey: ZkeyHandle): void
  /** Keys alive in this process (all threads) and the bytes of their MSM tables. */
  memoryStats(): MemoryStats
  zkeyInfo(zkey: ZkeyHandle): ZkeyInfo
  /** Proves a `.wtns` witness on the calling thread (blocking it: call from a worker thread). */
  prove(zkey: ZkeyHandle, wtns: Uint8Array, options?: ProveOptions): ProveResult
  /** The same on libuv's thread pool; the witness is copied first. */
  proveAsync(zkey: ZkeyHandle, wtns: Uint8Array, options?: ProveOptions): Promise<ProveResult>
  /**
   * Lowers the calling thread's CPU priority (Linux: per-thread nice value, and SCHED_IDLE when
   * `idle`); threads it starts inherit it. False where not permitted or not supported.
   */
  setThreadPriority(nice: number, idle?: boolean): boolean
  /**
   * Checks every point a Groth16 prover or verifier reads from a snarkjs bn128 zkey (the header's
   * α₁ β₁ β₂ γ₂ δ₁ δ₂, IC, A, B1, B2, C and H): canonical coordinates, G1 points on the curve, G2
   * points on the twist and in its r-order subgroup (none of the header's at infinity). Returns how
   * many of each it checked, or throws MZK_INVALID_INPUT naming the first bad point's section and
   * index. `threads` share the large sections (default 1); blocks the calling thread.
   */
  checkZkeyPoints(zkey: Uint8Array, options?: { readonly threads?: number; readonly kernel?: string }): PointCount
  /**
   * The phase 2 of a Groth16 setup from an operator's prepared ptau: writes at `zkey` the key
   * snarkjs's `zKey.newZKey(r1cs, ptau)` writes, byte for byte (no contribution yet: δ = 1). Both
   * files are mapped, and of the ptau only its header, first α/β points, the Lagrange sections at the
   * circuit's domain size and the τ powers the circuit hash covers are read. Throws
   * MZK_INVALID_INPUT saying why for a ptau of another curve, one too small for the circuit, one not
   * prepared for phase 2, a truncated file or a malformed r1cs (no file is left behind then),
   * MZK_IO where a file cannot be opened or written. Blocks the calling thread.
   */
  phase2NewZkey(
    r1cs: string,
    ptau: string,
    zkey: string,
    options?: {
      readonly threads?: number
      readonly kernel?: string
      /**
       * Where the domain is the ptau's whole power and above 2^14, snarkjs's circuit hash reads one
       * "point" past the ptau's τ section: its hashed form (64 bytes), computed with snarkjs's own
       * WebAssembly (`packages/proving/src/build/phase2.mjs`). Without it such a ptau is refused.
       */
      readonly pastEnd?: Uint8Array
    }
  ): Phase2Info
  /**
   * One phase-2 contribution applied in place to a key phase2NewZkey wrote: a fresh δ from the OS
   * CSPRNG (held and wiped in native memory), δ₁ δ₂ multiplied by δ, every C and H point by δ⁻¹,
   * and the proof of knowledge g1_s (random), g1_sx = δ·g1_s, g2_spx = δ·g2_sp, where g2_sp is what
   * `hashToG2(g1s, g1sx)` returns (called once, synchronously: snarkjs's hash of the transcript to
   * G2, 128 bytes). Points in and out are Montgomery little-endian, as a zkey stores them. Section
   * 10 (the contribution record) is left to the caller (`packages/proving/src/build/phase2.mjs`).
   */
  phase2Contribute(
    zkey: string,
    options: {
      readonly hashToG2: (g1s: Buffer, g1sx: Buffer) => Uint8Array
      readonly threads?: number
      readonly kernel?: string
    }
  ): { readonly g1s: Buffer; readonly g1sx: Buffer; readonly deltaAfter: Buffer; readonly g2spx: Buffer }
  /**
   * A development Groth16 setup from fresh toxic waste (τ, α, β, δ from the OS CSPRNG, wiped after):
   * reads the circom `.r1cs` at `r1csPath` (mapped, never copied into JavaScript) and writes a
   * snarkjs-format bn128 `.zkey` at `zkeyPath` (every section of `zkey new` + one contribution).
   * Whoever runs it could forge proofs for the key: development only. `ptauPath` also writes the
   * prepared powers of tau of the same τ, α, β (power log2(domain) + 1 ≤ 18), against which
   * `snarkjs zkey verify` accepts the key. `hashToG2` must be snarkjs's hashToG2 of the
   * contribution's transcript (64 bytes) as 128 bytes LEM; it is called once, synchronously. Blocks
   * the calling thread. MZK_INVALID_INPUT for a malformed r1cs (naming the problem), MZK_IO when a
   * file cannot be read or written.
   */
  setupDevelopment(r1csPath: string, zkeyPath: string, options: DevelopmentSetupOptions): DevelopmentSetup
  /**
   * Checks a snarkjs verification key (every point canonical and on its curve, β₂ γ₂ δ₂ in G2, none
   * of α₁ β₂ γ₂ δ₂ at infinity) and prepares it for verifyGroth16: the Miller loop of e(α₁, β₂), the
   * line functions of γ₂ and δ₂, tables of multiples of the first 32 IC points. Throws
   * MZK_INVALID_INPUT naming the first field that is wrong. About 3 ms plus 1 ms per IC point.
   */
  prepareVerifyingKey(vkey: Groth16VerificationKey, options?: { readonly kernel?: string }): VerifyingKeyHandle
  /**
   * snarkjs 0.7's groth16.verify, natively (one final exponentiation for the four pairings), on the
   * calling thread. False for every proof that is not valid, malformed ones included: wrong shapes
   * or strings, a coordinate ≥ q, a point off its curve, π_B outside G2, a public signal ≥ r, a
   * number of signals other than IC's. Signals and coordinates are decimal strings (or 0x-hex
   * strings, or safe integers). Throws MZK_INVALID_INPUT only for a handle that is not a key's.
   */
  verifyGroth16(vkey: VerifyingKeyHandle, proof: Groth16Proof, publicSignals: ReadonlyArray<string>): boolean
}

export type NativeLoad =
  | { readonly ok: true; readonly addon: NativeProverAddon }
  | { readonly ok: false; readonly reason: string }

/** The addon, or why it cannot be used (not built, failed to load). Never throws. */
export declare const loadNativeProver: () => NativeLoad

/** Options of setupDevelopment. */
export interface DevelopmentSetupOptions {
  readonly hashToG2: (transcript: Uint8Array) => Uint8Array
  /** Threads for the tables and points (default 1). */
  readonly threads?: number
  readonly ptauPath?: string
  /** The contribution's name in the key's MPC parameters (default "mzk development setup"). */
  readonly name?: string
  readonly kernel?: string
}

/** What setupDevelopment made: the key's shape, snarkjs's circuit hash (hex) and its phases in ms. */
export interface DevelopmentSetup {
  readonly nVars: number
  readonly nPublic: number
  readonly nConstraints: number
  readonly domainSize: number
  readonly csHash: string
  readonly ptauPower?: number
  readonly ms: { readonly scalars: number; readonly tables: number; readonly points: number; readonly ptau: number }
}
