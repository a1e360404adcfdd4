import { Duration, Effect, type Scope } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import pg from "pg"

const root = fileURLToPath(new URL("../../..", import.meta.url))

export const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** A worker fixture (see fixtures/workerProcess.ts) running as its own OS process. */
export interface WorkerProcess {
  readonly pid: number
  /** Waits until the worker's loops run; fails if it exits first. */
  readonly ready: Effect.Effect<void>
  /** Closes its stdin, waits for it to exit cleanly and returns its report. */
  readonly stop: Effect.Effect<Record<string, unknown>>
  /** SIGKILL: no finalizer, no clean-up, the connection just drops. Returns the signal it died of. */
  readonly kill: Effect.Effect<NodeJS.Signals | null>
}

/** Polls (in real time) until `check` holds, or dies after `within`. */
export const eventually = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  check: (a: A) => boolean,
  within: Duration.DurationInput,
  what: string
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(within)
    for (;;) {
      const value = yield* effect
      if (check(value)) return value
      if (Date.now() > deadline) return yield* Effect.dieMessage(`Not reached within ${Duration.format(within)}: ${what}`)
      yield* Effect.sleep("25 millis")
    }
  })

/**
 * Starts `node --import tsx <fixture> ...args` from the repo root. Closing the scope SIGKILLs it if
 * it still runs, so a failed test leaves no worker behind.
 */
export const spawnWorker = (file: string, args: ReadonlyArray<string>): Effect.Effect<WorkerProcess, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, ["--import", "tsx", file, ...args], { cwd: root, stdio: ["pipe", "pipe", "pipe"] })
      const lines: Array<Record<string, unknown>> = []
      let output = ""
      let partial = ""
      let exit: Exit | undefined
      const exited = new Promise<Exit>((resolve) =>
        child.on("exit", (code, signal) => {
          exit = { code, signal }
          resolve(exit)
        })
      )
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk
        partial += chunk
        for (let i = partial.indexOf("\n"); i >= 0; i = partial.indexOf("\n")) {
          const line = partial.slice(0, i)
          partial = partial.slice(i + 1)
          try {
            const parsed: unknown = JSON.parse(line)
            if (typeof parsed === "object" && parsed !== null) lines.push(parsed as Record<string, unknown>)
          } catch {
            // a log line
          }
        }
      })
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (output += chunk))
      // The worker may be gone when stdin is closed or written to.
      child.stdin.on("error", () => undefined)

      const failed = (what: string) => `worker ${child.pid} ${what} (exit ${JSON.stringify(exit)}):\n${output}`
      const waitExit = (within: Duration.DurationInput) =>
        Effect.promise(() => exited).pipe(
          Effect.timeoutFail({ duration: within, onTimeout: () => failed("did not exit") }),
          Effect.orDieWith((message) => new Error(message))
        )

      const worker: WorkerProcess = {
        pid: child.pid!,
        ready: eventually(
          Effect.sync(() => lines.some((l) => "ready" in l)),
          (ready) => ready || exit !== undefined,
          "30 seconds",
          `worker ${child.pid} ready`
        ).pipe(Effect.flatMap((ready) => ready ? Effect.void : Effect.dieMessage(failed("exited before it was ready")))),
        stop: Effect.gen(function*() {
          child.stdin.end()
          const { code } = yield* waitExit("20 seconds")
          const report = lines.find((l) => "pid" in l)
          if (code !== 0 || report === undefined) return yield* Effect.dieMessage(failed("did not stop cleanly"))
          return report
        }),
        kill: Effect.gen(function*() {
          child.kill("SIGKILL")
          return (yield* waitExit("10 seconds")).signal
        })
      }
      return { worker, running: () => exit === undefined, child, exited }
    }),
    ({ child, exited, running }) =>
      running() ? Effect.promise(() => (child.kill("SIGKILL"), exited)) : Effect.void
  ).pipe(Effect.map(({ worker }) => worker))

/** A plain pg client on the test database, for the checks: what is in the tables, read directly. */
export const sqlClient = (url: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        return client
      }),
      (client) => Effect.promise(() => client.end())
    ),
    (client) => <Row extends Record<string, unknown>>(text: string, values: ReadonlyArray<unknown> = []) =>
      Effect.promise(() => client.query<Row>(text, [...values]).then((r) => r.rows))
  )
