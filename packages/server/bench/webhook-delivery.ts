/**
 * Webhook delivery benchmark (not a test). Delivers events through the real delivery engine and
 * the Node transport to a local receiver on 127.0.0.1 (a separate process), over SQLite (a temporary file; the default)
 * or testkit's store (`--store memory`: SQLite in memory):
 *
 *   pnpm exec tsx packages/server/bench/webhook-delivery.ts [events=2000] [pacedEvents=1000] [--store sqlite|memory] [--per-account 32]
 *
 * Run 1 records `events` events as fast as it can while the engine delivers them. Run 2 records
 * `events` events with no engine running, then starts one and times the drain of that backlog.
 * Run 3 records `pacedEvents` at 200 events/s: latency at a steady load.
 * Latency is from the moment `Events.record` returned to the receiver having the whole request.
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): 20 events, 10 paced,
 * 5 to warm up, and a run that does not deliver every event fails.
 */
import { Accounts, DEFAULT_WEBHOOK_CONFIG, DeliveryEngine, type EventId, Events, type KeyId, now, WebhookConfig, Webhooks } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, Layer } from "effect"
import { SqliteStore } from "@mzk/adapters-sqlite"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { NodeWebhookTransport } from "../src/webhookTransport.js"

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { store: { type: "string", default: "sqlite" }, "per-account": { type: "string", default: "32" }, smoke: { type: "boolean", default: false } }
})
const SMOKE = values.smoke
const TOTAL = SMOKE ? 20 : Number(positionals[0] ?? 2000)
const PACED = SMOKE ? 10 : Number(positionals[1] ?? 1000)
const WARM_UP = SMOKE ? 5 : 50
const PACE_PER_SECOND = 200
const RUN_TIMEOUT = "60 seconds"

const clockMs = () => performance.timeOrigin + performance.now()

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** Runs `effect` with a delivery engine working beside it; the engine stops when it ends. */
const withEngine = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.flatMap(
    Layer.build(DeliveryEngine.layer.pipe(Layer.provide(NodeWebhookTransport({ allowInsecure: true })))),
    (engine) => Effect.provide(effect, engine)
  ))

const program = Effect.gen(function*() {
  const recordedAt = new Map<string, number>()
  const latencies: Array<number> = []
  let received = 0
  let lastReceipt = 0
  // The receiver runs in its own process, as a real one would: the sender's event loop is then
  // measured alone, and the machine's second core serves the receiver.
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./receiverProcess.ts", import.meta.url))], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => child.stdin.end()))
  const port = yield* Effect.async<number>((resume) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.startsWith("listening ")) return resume(Effect.succeed(Number(line.slice(10))))
      const [id, at] = line.split(" ") as [string, string]
      const sent = recordedAt.get(id)
      if (sent !== undefined) latencies.push(Number(at) - sent)
      received++
      lastReceipt = Number(at)
    })
  })
  const receiver = { url: `http://127.0.0.1:${port}/webhook` }
  const account = (yield* (yield* Accounts).create({ name: "bench" })).id
  yield* (yield* Webhooks).create(account, { url: receiver.url, events: ["key.revoked"] })
  const events = yield* Events

  const recordOne = (i: number) =>
    Effect.gen(function*() {
      const event = yield* events.record(account, "key.revoked", {
        id: `key_${String(i).padStart(26, "0")}` as KeyId,
        name: `bench-${i}`,
        revoked_at: yield* now,
        metadata: {}
      })
      recordedAt.set(event.id as EventId, clockMs())
    })

  const waitForAll = (target: number) =>
    Effect.gen(function*() {
      while (received < target) yield* Effect.sleep("2 millis")
    }).pipe(Effect.timeout(RUN_TIMEOUT), Effect.option, Effect.tap(() => {
      if (SMOKE && received < target) return Effect.die(new Error(`${received} of ${target} events delivered within ${RUN_TIMEOUT}`))
    }))

  const report = (label: string, count: number, startedAt: number) => {
    const sorted = [...latencies].sort((a, b) => a - b)
    const seconds = (lastReceipt - startedAt) / 1000
    console.log(`${label}: ${latencies.length}/${count} delivered in ${seconds.toFixed(2)} s = ${(latencies.length / seconds).toFixed(0)} deliveries/s`)
    console.log(`  event-to-receipt latency ms: p50 ${percentile(sorted, 50).toFixed(1)}  p95 ${percentile(sorted, 95).toFixed(1)}  p99 ${percentile(sorted, 99).toFixed(1)}  max ${sorted.at(-1)?.toFixed(1)}`)
  }

  const reset = () => {
    latencies.length = 0
    received = 0
  }

  yield* withEngine(Effect.gen(function*() {
    // Warm-up: JIT, sockets in the pool.
    for (let i = 0; i < WARM_UP; i++) yield* recordOne(i)
    yield* waitForAll(WARM_UP)
    reset()

    // Run 1: events recorded as fast as possible while the engine delivers them.
    const burstStart = clockMs()
    for (let i = 0; i < TOTAL; i++) yield* recordOne(1000 + i)
    const recordedIn = clockMs() - burstStart
    yield* waitForAll(TOTAL)
    console.log(`burst: recorded ${TOTAL} events in ${(recordedIn / 1000).toFixed(2)} s`)
    report("burst (recording and delivering at once)", TOTAL, burstStart)
  }))

  // Run 2: a backlog recorded while no engine runs (say, after a restart), then drained.
  reset()
  for (let i = 0; i < TOTAL; i++) yield* recordOne(50_000 + i)
  const drainStart = clockMs()
  yield* withEngine(Effect.gen(function*() {
    yield* waitForAll(TOTAL)
    const seconds = (lastReceipt - drainStart) / 1000
    console.log(`drain: a backlog of ${received}/${TOTAL} delivered in ${seconds.toFixed(2)} s = ${(received / seconds).toFixed(0)} deliveries/s`)

    // Run 3: a steady load.
    reset()
    const pacedStart = clockMs()
    for (let i = 0; i < PACED; i++) {
      const due = pacedStart + (i * 1000) / PACE_PER_SECOND
      const wait = due - clockMs()
      if (wait > 0) yield* Effect.sleep(`${Math.floor(wait)} millis`)
      yield* recordOne(100_000 + i)
    }
    yield* waitForAll(PACED)
    report(`paced ${PACE_PER_SECOND}/s`, PACED, pacedStart)
  }))
})

const dir = mkdtempSync(join(tmpdir(), "mzk-bench-"))
const store = values.store === "memory" ? undefined : SqliteStore({ filename: join(dir, "bench.db") })
console.log(`store: ${values.store}`)

await Effect.runPromise(
  program.pipe(
    Effect.scoped,
    Effect.provide(testCore(store)),
    Effect.provideService(WebhookConfig, {
      ...DEFAULT_WEBHOOK_CONFIG,
      allowInsecureWebhooks: true,
      maxConcurrentPerWebhook: 32,
      // One account here: its share (16 by default) would bound the run, not the engine; `--per-account 16` measures that.
      maxConcurrentPerAccount: Number(values["per-account"])
    })
  )
)
rmSync(dir, { recursive: true, force: true })
