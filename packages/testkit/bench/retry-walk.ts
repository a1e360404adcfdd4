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

// --smoke (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one run after the first.
const RUNS = process.argv[2] === "--smoke" ? 1 : Number(process.argv[2] ?? 20)

const loadStarted = performance.now()
const first = await runRetryScheduleExample()
const firstMs = performance.now() - loadStarted
if (first.attempts.length !== 6 || first.webhook.active) throw new Error(`the walk went wrong: ${JSON.stringify(first)}`)

// CPU time as well as real time: on a shared, loaded machine the real time of a run mostly measures
// the other processes, its CPU time what the walk itself costs.
const times: Array<number> = []
const cpu: Array<number> = []
for (let i = 0; i < RUNS; i++) {
  const before = process.cpuUsage()
  times.push((await runRetryScheduleExample()).elapsedMs)
  const used = process.cpuUsage(before)
  cpu.push((used.user + used.system) / 1000)
}
const at = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(1)
}
console.error(`retry-schedule walk (6 attempts over 8 simulated hours), ${RUNS} runs after the first:`)
console.error(`  first run, modules and layers included: ${firstMs.toFixed(0)} ms`)
console.error(`  later runs, real time: p50 ${at(times, 50)} ms, p90 ${at(times, 90)} ms, max ${at(times, 100)} ms`)
console.error(`  later runs, CPU time:  p50 ${at(cpu, 50)} ms, p90 ${at(cpu, 90)} ms, max ${at(cpu, 100)} ms`)
