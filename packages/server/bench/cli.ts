/**
 * How long the `mzk` command line takes to answer (a script, not a test): each command run as a
 * real process, `--runs` times, against a fresh SQLite database in a temporary folder; the median
 * and the fastest wall time of each are printed, with the machine's load (the targets are for a
 * quiet machine: `--help` < 0.3 s, `accounts create` and `keys list` < 0.8 s).
 *
 * CPU time (user + system) is printed beside: on a busy machine it is the closer to what the same
 * start takes on a quiet one.
 *
 * Rows: `node -e 0` (Node's own start, the floor), each command through the README's `./mzk` and
 * through `pnpm -s mzk` (the same bundle behind pnpm: the difference is pnpm's own start), `--help`
 * also as the first one after a new bundle (rendered by the CLI, then kept; later ones are printed
 * from what was kept), and the bundle's making (what the root `postinstall` adds to `pnpm install`).
 * With `--tsx`, also `--help` read from the TypeScript sources through tsx, as `pnpm mzk` ran before.
 *
 *   pnpm bench packages/server/bench/cli.ts [--runs 7] [--tsx]
 *
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one run of each
 * command through `./mzk` only, on the bundle `pnpm install` made: it neither bundles again nor
 * clears the rendered help, which other tests running beside it use.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")
const { values } = parseArgs({
  options: { runs: { type: "string", default: "7" }, tsx: { type: "boolean", default: false }, smoke: { type: "boolean", default: false } }
})
const SMOKE = values.smoke
const runs = SMOKE ? 1 : Number(values.runs)
const dir = mkdtempSync(join(tmpdir(), "mzk-bench-cli-"))
const database = `sqlite:${join(dir, "bench.db")}`

/** One process, to its end; its stdout. Fails the script when the command fails: a number of a failure is no number. */
const run = (command: string, args: ReadonlyArray<string>): { readonly ms: number; readonly stdout: string } => {
  const started = process.hrtime.bigint()
  const ran = spawnSync(command, args, { cwd: root, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (ran.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${ran.status ?? ran.signal}: ${ran.stderr}`)
  return { ms, stdout: ran.stdout }
}

/**
 * One process's wall time and CPU time (user + system, its children's included), the latter from
 * bash's `times`: on a loaded machine the wall time mostly measures the wait for a core, the CPU
 * time what the start itself costs.
 */
const timed = (command: string, args: ReadonlyArray<string>): { readonly ms: number; readonly cpuMs: number } => {
  const script = `"$@" >/dev/null 2>&1; status=$?; times; exit $status`
  const { ms, stdout } = run("bash", ["-c", script, "bash", command, ...args])
  const seconds = (text: string) => {
    const match = /(\d+)m([\d.]+)s/.exec(text)
    return match === null ? Number.NaN : Number(match[1]) * 60 + Number(match[2])
  }
  const children = stdout.trim().split("\n").at(-1)!.trim().split(/\s+/)
  return { ms, cpuMs: (seconds(children[0]!) + seconds(children[1]!)) * 1000 }
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const rows: Array<readonly [string, number, number, number, number]> = []
const measure = (label: string, command: string, args: () => ReadonlyArray<string>, times = runs) => {
  const results = Array.from({ length: times }, () => timed(command, args()))
  const ms = results.map((r) => r.ms)
  rows.push([label, median(ms), Math.min(...ms), median(results.map((r) => r.cpuMs)), times])
  process.stderr.write(`${label}: ${median(ms).toFixed(0)} ms\n`)
}

try {
  // Made once here, so that no measured run pays for a stale bundle.
  if (!SMOKE) {
    const bundled = run(process.execPath, ["scripts/bundle-cli.mjs"])
    rows.push(["bundle the CLI (postinstall)", bundled.ms, bundled.ms, Number.NaN, 1])
  }
  const created = JSON.parse(run(process.execPath, ["scripts/mzk.mjs", "accounts", "create", "--name", "Bench", "--database", database, "--json"]).stdout) as {
    account_id: string
  }
  let n = 0
  const mzk = (via: "pnpm" | "sh", args: ReadonlyArray<string>) =>
    via === "pnpm" ? ["pnpm", ["-s", "mzk", ...args]] as const : ["./mzk", args] as const
  const commands: ReadonlyArray<readonly [string, () => ReadonlyArray<string>]> = [
    ["--help", () => ["--help"]],
    ["accounts create", () => ["accounts", "create", "--name", `Bench ${++n}`, "--database", database, "--json"]],
    ["keys list", () => ["keys", "list", "--account", created.account_id, "--database", database]]
  ]
  measure("node -e 0", process.execPath, () => ["-e", "0"])
  if (!SMOKE) {
    const current = JSON.parse(readFileSync(join(root, "node_modules", ".mzk-cli", "current.json"), "utf8")) as { dir: string }
    measure("./mzk --help, first after a new bundle (rendered)", "./mzk", () => {
      rmSync(join(root, "node_modules", ".mzk-cli", current.dir, "help"), { recursive: true, force: true })
      return ["--help"]
    })
  }
  for (const [label, args] of commands) {
    for (const via of SMOKE ? ["sh"] as const : ["sh", "pnpm"] as const) {
      const [command] = mzk(via, [])
      measure(`${via === "pnpm" ? "pnpm -s mzk" : "./mzk"} ${label}`, command, () => mzk(via, args())[1])
    }
  }
  if (values.tsx) {
    measure("tsx (before): --help", process.execPath, () => ["--conditions=@mzk/source", "--import", "tsx", "packages/server/src/cli.ts", "--help"], Math.min(runs, 3))
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

const width = Math.max(...rows.map(([label]) => label.length))
process.stdout.write(`CLI start-up, wall time of a whole process (load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}, Node ${process.version})\n`)
process.stdout.write(`${"command".padEnd(width)}  median ms  fastest ms  median CPU ms  runs\n`)
for (const [label, med, min, cpu, times] of rows) {
  const cpuText = Number.isNaN(cpu) ? "-" : cpu.toFixed(0)
  process.stdout.write(`${label.padEnd(width)}  ${med.toFixed(0).padStart(9)}  ${min.toFixed(0).padStart(10)}  ${cpuText.padStart(13)}  ${String(times).padStart(4)}\n`)
}
