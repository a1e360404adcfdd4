import type {
  AuditConfigShape,
  CircuitsConfigShape,
  EventsConfigShape,
  LimitsConfig,
  ProofsConfigShape,
  Prover,
  SessionAuthenticator,
  Verifier,
  WebhookConfigShape
} from "@mzk/core"
import type { ProverEngine } from "@mzk/proving"
import type { Layer } from "effect"
import type { DatabaseTarget } from "./databaseTarget.js"
import type { OperationsOptions } from "./operations.js"

// The options every way of running mzk takes, in a module of their own: the composition root
// (mzk.ts) builds on the foundation (foundation.ts), and both read these; kept in mzk.ts, the
// foundation and the root imported each other.

/** Where accounts' circuits are built and cached, and their limits (`CircuitsConfig`). */
export interface CircuitsOptions extends Partial<CircuitsConfigShape> {
  /**
   * The operator's prepared (phase 2) powers of tau file, e.g. a Hermez `powersOfTau28_hez_final_<power>.ptau`.
   * Without it or `developmentPtau`, uploads of circom sources are refused (`setup_unavailable`).
   */
  readonly ptau?: string | undefined
  /**
   * Development only: without `ptau`, make a powers of tau of this power once (cached in `dir`) and
   * build with it; the circuits are marked `development_only`.
   */
  readonly developmentPtau?: { readonly power: number; readonly dir: string } | undefined
  /**
   * The UltraHonk CRS directory Noir programs are proven against (`bn254_g1.dat`, `bn254_g2.dat`).
   * Without it but with `developmentPtau`, a development CRS of 2^power + 1 points is made in
   * `developmentPtau.dir/noir-crs` (its Noir circuits `development_only`); without either, Noir
   * uploads are refused (`setup_unavailable`).
   */
  readonly noirCrs?: string | undefined
  /** Where artifacts read from the database are kept on local disk (default: the OS's temp dir). */
  readonly cacheDir?: string | undefined
  /** The prover threads' memory budget for loaded circuits (default MZK_PROVER_MEMORY, else 1 GiB per thread). */
  readonly proverMemoryBytes?: number | undefined
}

export interface MzkOptions {
  readonly database: DatabaseTarget
  /** The embedding application's session check; API keys only when absent. */
  readonly sessions?: Layer.Layer<SessionAuthenticator>
  /**
   * Defaults to the prover pool of `@mzk/proving` (`ProverPoolLive`), native where its addon
   * loaded and snarkjs otherwise, started on first use.
   */
  readonly prover?: Layer.Layer<Prover, unknown>
  /** Verification of proofs made elsewhere (`POST /verifications`); default `VerifierLive` (Groth16 with the prover's engine, PLONK and FFLONK with snarkjs, UltraHonk where a CRS is set). */
  readonly verifier?: Layer.Layer<Verifier>
  /** The default pool's engine; absent: MZK_PROVER_ENGINE, else `auto` (native where it loaded). */
  readonly proverEngine?: ProverEngine | undefined
  /** Development only: accept http:// and non-public webhook URLs. */
  readonly allowInsecureWebhooks?: boolean
  /**
   * `eager` loads the circuits into the prover threads at start (processes that run the proof
   * worker, so no proof pays for it); `lazy` (default) on first use, so one-off commands start none.
   */
  readonly startProver?: "eager" | "lazy"
  readonly circuits?: CircuitsOptions
  /** Metrics (prom-client), the access log and what `/readyz` reports. */
  readonly operations?: OperationsOptions
  /** Proof timeout, retention and the workers' timings over DESIGN.md's defaults. The timeout is also the prover pool's. */
  readonly proofs?: Partial<ProofsConfigShape> | undefined
  /** Rate and size limits over the published defaults. */
  readonly limits?: Partial<LimitsConfig> | undefined
  /** Webhook delivery settings (attempt timeout…) over the defaults; `allowInsecureWebhooks` is its own option. */
  readonly webhooks?: Partial<Omit<WebhookConfigShape, "allowInsecureWebhooks">> | undefined
  /** Event retention (30 days) and its sweep over the defaults. */
  readonly events?: Partial<EventsConfigShape> | undefined
  /** The default pool's prover threads: proofs worked on at once (default: the core count). */
  readonly proverThreads?: number | undefined
  /** The audit log's retention over its default (365 days). */
  readonly audit?: Partial<AuditConfigShape> | undefined
  /**
   * The proxies whose `X-Forwarded-For` names the client (addresses, CIDR ranges, `loopback`,
   * `linklocal`, `uniquelocal`), for the audit log's `ip_address`. Default none: the connection's peer.
   */
  readonly trustProxy?: ReadonlyArray<string> | undefined
}
