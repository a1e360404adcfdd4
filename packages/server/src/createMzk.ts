import {
  type AccountId,
  CreateAccountInput,
  CreateVerificationInput,
  decodeInput,
  type Prover,
  type Scope as ApiScope,
  SessionAuthenticator,
  type Usage,
  UsageReports,
  type Verification,
  Verifications
} from "@mzk/core"
import { makeFetchHandler, makeMountedNodeListener, type NodeListener } from "@mzk/http"
import type { ProverEngine } from "@mzk/proving"
import type { Registry } from "prom-client"
import { Cause, Effect, Either, Exit, Layer, ManagedRuntime, Option, Redacted, Scope } from "effect"
import { createAccountWithKey } from "./accounts.js"
import { type DatabaseTarget, parseDatabaseUrl } from "./database.js"
import { type HostLogger, mzkLogger } from "./logging.js"
import { type CircuitsOptions, CoreServicesLive, CoreLoopsLive, type MzkOptions } from "./mzk.js"

/** Who a session token of the embedding application belongs to; `null`/`undefined` when nobody. */
export interface EmbeddedSession {
  readonly account_id: string
  /** Defaults to every scope. */
  readonly scopes?: ReadonlyArray<ApiScope>
  /** Who holds the session (your user id): the actor of its changes in the audit log. */
  readonly actor_id?: string
}

export type SessionCheck = (token: string) => Promise<EmbeddedSession | null | undefined> | EmbeddedSession | null | undefined

export interface CreateMzkOptions {
  /** `sqlite:<path>`, `sqlite::memory:`, `postgres://…`, or the parsed `DatabaseTarget`. Created and migrated on creation. */
  readonly database: string | DatabaseTarget
  /**
   * The application's own session check, for its signed-in users calling mzk with their session
   * token as the bearer token (API keys never reach it): a function, or a `SessionAuthenticator`
   * layer for Effect applications. Absent: API keys only.
   */
  readonly sessionAuthenticator?: SessionCheck | Layer.Layer<SessionAuthenticator> | undefined
  /**
   * Run the background loops (proof worker, webhook delivery, retention, circuit builds) in this
   * process once `start()` is called (default true). `false` when `mzk worker` processes run
   * them elsewhere over the same (Postgres) database.
   */
  readonly workers?: boolean | undefined
  /** A prover of your own (a `Prover` layer); default the prover pool of `@mzk/proving`. */
  readonly prover?: Layer.Layer<Prover, unknown> | undefined
  /** The default pool's engine: `auto` (native where its addon loaded), `native`, `snarkjs`; default MZK_PROVER_ENGINE, else auto. */
  readonly proverEngine?: ProverEngine | undefined
  /**
   * Accounts' circuits: the powers of tau, cache folder, limits (see `CircuitsOptions`). Without
   * `ptau` or `developmentPtau`, uploads of circom sources are refused (409 `setup_unavailable`);
   * prebuilt ones are taken. Noir programs need `noirCrs` (the UltraHonk CRS directory) or
   * `developmentPtau` (a development CRS made beside it); without either they are refused alike.
   */
  readonly circuits?: CircuitsOptions | undefined
  /** Development only: accept http:// and non-public webhook URLs. */
  readonly allowInsecureWebhooks?: boolean | undefined
  /**
   * Your application's prom-client registry: mzk adds its metrics (`mzk_*`: requests, proofs,
   * queue depth, deliveries, rate-limit refusals) for your own `/metrics` to serve. Absent: none kept.
   */
  readonly metricsRegistry?: Registry | undefined
  /**
   * Your application's logger (pino, bunyan, `console`, or anything with `info`/`warn`/`error` and
   * optionally `debug`): mzk's log lines go to it, pino-style loggers (those with `child()`) called
   * `(fields, message)`, others `(message, fields)`. Absent: JSON lines on stdout.
   */
  readonly logger?: HostLogger | undefined
  /** One structured log line per request mzk answers. */
  readonly accessLog?: boolean | undefined
  /** Proof timeout and retention over the defaults (60 s, 30 days), as `mzk serve`'s settings. */
  readonly proofs?: MzkOptions["proofs"]
  /** Rate and size limits over the published defaults. */
  readonly limits?: MzkOptions["limits"]
  /** Webhook delivery settings (the attempt timeout…) over the defaults. */
  readonly webhooks?: MzkOptions["webhooks"]
  /** Event retention (`retentionMs`, 30 days by default, as `--event-retention`) and its sweep. */
  readonly events?: MzkOptions["events"]
  /** The default prover pool's threads (default: the core count). */
  readonly proverThreads?: number | undefined
  /** The audit log's retention over its default (365 days), as `mzk serve --audit-retention`. */
  readonly audit?: MzkOptions["audit"]
  /**
   * The proxies in front of your application whose `X-Forwarded-For` names the client, for the
   * audit log's `ip_address` (Express's `trust proxy` forms: addresses, CIDR ranges, `loopback`,
   * `linklocal`, `uniquelocal`). Default none: the connection's peer. The fetch handler sees no
   * connection: there the address is null, unless this is set, when the platform in front is taken
   * as a trusted proxy and `X-Forwarded-For` names the client.
   */
  readonly trustProxy?: MzkOptions["trustProxy"]
}

const databaseTarget = (database: string | DatabaseTarget): DatabaseTarget =>
  typeof database !== "string" ? database : Either.getOrElse(parseDatabaseUrl(database), (message) => {
    throw new Error(`createMzk: ${message}`)
  })

const sessionLayer = (check: CreateMzkOptions["sessionAuthenticator"]): Layer.Layer<SessionAuthenticator> | undefined =>
  typeof check !== "function" ? check : Layer.succeed(SessionAuthenticator, {
    // A session check that throws is a bug of the application: a defect, answered 500 `internal_error`.
    authenticate: (token) =>
      Effect.map(Effect.promise(async () => await check(Redacted.value(token))), (session) =>
        session == null ? Option.none() : Option.some({ ...session, account_id: session.account_id as AccountId }))
  })

/**
 * mzk inside an application: its API as a Node `(req, res)` handler and as a fetch handler, over
 * one set of services, and its background loops.
 *
 * Resolves once the database is open and migrated; `handler` and `fetch` answer from then on. The
 * loops start with `start()`, not before, so creating mzk (in a script, a test, a request-only
 * replica) never proves or delivers anything by surprise; an application that takes proofs calls
 * it once, or runs `mzk worker` elsewhere and passes `workers: false`. `stop()` stops the loops
 * (proofs and deliveries in flight are handed back for any process to take up) and closes the
 * prover threads and the database, after which nothing of mzk keeps the process alive; stop the
 * application's server from accepting first, as requests after `stop()` fail.
 */
export const createMzk = async (options: CreateMzkOptions) => {
  const database = databaseTarget(options.database)
  const sessions = sessionLayer(options.sessionAuthenticator)
  const settings = {
    database,
    ...(sessions === undefined ? {} : { sessions }),
    ...(options.prover === undefined ? {} : { prover: options.prover }),
    ...(options.proverEngine === undefined ? {} : { proverEngine: options.proverEngine }),
    ...(options.circuits === undefined ? {} : { circuits: options.circuits }),
    ...(options.allowInsecureWebhooks === undefined ? {} : { allowInsecureWebhooks: options.allowInsecureWebhooks }),
    operations: { registry: options.metricsRegistry, accessLog: options.accessLog },
    proofs: options.proofs,
    limits: options.limits,
    webhooks: options.webhooks,
    events: options.events,
    proverThreads: options.proverThreads,
    audit: options.audit,
    trustProxy: options.trustProxy
  }
  // The prover pool starts on the first verification, or once start()'s proof worker runs (before
  // it takes a proof, so no proof's times count the start): an API-only process never starts it.
  const runtime = ManagedRuntime.make(CoreServicesLive({ ...settings, startProver: "lazy" }).pipe(Layer.provideMerge(mzkLogger(options.logger))))
  // Rejects with the error itself (a StorageError, a PtauError…) rather than Effect's FiberFailure wrapper.
  const run = <A, E>(effect: Effect.Effect<A, E, ManagedRuntime.ManagedRuntime.Context<typeof runtime>>): Promise<A> =>
    runtime.runPromiseExit(effect).then((exit) => Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause)))
  let handler: NodeListener
  let fetch: (request: Request) => Promise<Response>
  try {
    ;[handler, fetch] = await run(Effect.all([makeMountedNodeListener, makeFetchHandler]))
  } catch (error) {
    await runtime.dispose()
    throw error
  }

  let started: Promise<void> | undefined
  let stopped: Promise<void> | undefined
  const loops = Effect.runSync(Scope.make())

  const start = (): Promise<void> => {
    if (stopped !== undefined) return Promise.reject(new Error("createMzk: start() after stop()"))
    started ??= options.workers === false
      ? Promise.resolve()
      : run(Layer.buildWithScope(CoreLoopsLive(settings), loops).pipe(Effect.asVoid))
    return started
  }

  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      // A start still under way finishes first, so its loops are in the scope that closes.
      await started?.catch(() => undefined)
      await run(Scope.close(loops, Exit.void))
      await runtime.dispose()
    })()
    return stopped
  }

  const decodeAccount = decodeInput(CreateAccountInput)
  const decodeVerification = decodeInput(CreateVerificationInput)

  return {
    /**
     * Node's `(req, res)`: for `http.createServer`, Fastify (`request.raw`, `reply.raw`), and
     * Express (`app.use`), where requests outside mzk's paths go on to the app's next routes.
     */
    handler,
    /** `(Request) => Promise<Response>`: for Hono, Next.js route handlers, any fetch-style server. */
    fetch,
    /** Starts the background loops (a no-op with `workers: false`); resolves once they run. Idempotent. */
    start,
    /** Stops the loops and closes the prover threads and the database. Idempotent. */
    stop,
    /**
     * An account and its first API key (`mzk accounts create` in process): the key is returned in
     * clear this once. The way to the first key of an embedded mzk; the API makes the rest.
     */
    createAccount: (input: { readonly name: string }): Promise<{ readonly account_id: AccountId; readonly api_key: string }> =>
      run(
        decodeAccount(input).pipe(
          Effect.flatMap(createAccountWithKey),
          Effect.map(({ account, api_key }) => ({ account_id: account.id, api_key })),
          Effect.mapError((failure) => failure._tag === "InvalidRequest" ? new Error(`createAccount: ${failure.message}`) : failure)
        )
      ),
    /**
     * An account's usage report, as `GET /api/v1/usage` answers it for a session (`UsageReports`
     * in core): the day's quota (there is no key, so no minute), proofs by status today, proving
     * seconds today and this month, per circuit.
     */
    usage: (accountId: string): Promise<Usage> => run(Effect.flatMap(UsageReports, (reports) => reports.get(accountId as AccountId))),
    /**
     * Checks a proof made anywhere, as `POST /api/v1/verifications` does (same input, same answer,
     * charged to the account's day): `valid: false` resolves; a malformed key, proof or signal
     * rejects with an Error naming the field.
     */
    verify: (accountId: string, input: unknown): Promise<Verification> =>
      run(
        decodeVerification(input).pipe(
          Effect.flatMap((decoded) => Effect.flatMap(Verifications, (verifications) => verifications.verify(accountId as AccountId, decoded))),
          Effect.mapError((failure) =>
            failure._tag === "InvalidRequest"
              ? new Error(`verify: ${[failure.message, ...(failure.details ?? []).map((d) => `${d.path}: ${d.message}`)].join("; ")}`)
              : failure
          )
        )
      ),
    /** The services for Effect programs (`runtime.runPromise(Effect.flatMap(Accounts, …))`). */
    runtime
  }
}

export type Mzk = Awaited<ReturnType<typeof createMzk>>
