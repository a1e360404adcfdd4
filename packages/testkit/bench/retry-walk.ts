/**
 * How long the TestClock walk of a webhook's whole retry schedule takes in real time (not a test):
 * `runRetryScheduleExample` (an account, a key, a failing webhook, a proof, six attempts over eight
 * simulated hours, the webhook disabled), run `runs` times in one process after one warm-up run.
 *
 *   pnpm bench packages/testkit/bench/retry-walk.ts [runs=20]
 *
 * The first run pays for loading the modules and building the layers once; the later ones are what
 * each test of a user's suite that walks the schedule costs. The walk's own log lines go to stdout
 * as in a test run; the figures go to stderr (`2>&1 >/dev/null` keeps only them).
 */
import { runRetryScheduleExample } from "@mzk/testkit/example"
import { performance } from "node:perf_hooks"

const RUNS = Number(process.argv[2] ?? 20)

const loadStarted = performance.now()
const first = await runRetryScheduleExample()
const firstMs = performance.now() - loadStarted
if (first.attempts.length !== 6 || first.webhook.active) throw new Error(`the walk went wrong: ${JSON.stringify(first)}`)

const times: Array<number> = []
for (let i = 0; i < RUNS; i++) times.push((await runRetryScheduleExample()).elapsedMs)
times.sort((a, b) => a - b)
const at = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!.toFixed(1)
console.error(`retry-schedule walk (6 attempts over 8 simulated hours), ${RUNS} runs after the first:`)
console.error(`  first run, modules and layers included: ${firstMs.toFixed(0)} ms`)
console.error(`  later runs: p50 ${at(50)} ms, p90 ${at(90)} ms, max ${at(100)} ms`)
