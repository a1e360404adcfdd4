// Every benchmark under `packages/*/bench/` in its smoke mode (`--smoke`: a second, one iteration,
// a tiny circuit), each as the process a reader would start: the full runs stay manual, but a bench
// that can no longer run, or whose two sides answer differently (http.ts's hand-written baseline
// against mzk), fails here rather than on the day someone needs its numbers.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { type Answer, differences } from "../../packages/server/bench/sameAnswer.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** What sits in a bench folder without being a bench: processes and modules the benches start or import. */
const HELPERS = new Set([
  "packages/server/bench/baselineServer.ts",
  "packages/server/bench/receiverProcess.ts",
  "packages/server/bench/sameAnswer.ts",
  "packages/proving/bench/largeChild.ts",
  "packages/proving/bench/systemsChild.ts",
  "packages/proving/bench/tablesChild.mjs"
])

/**
 * The runs, in order: large-circuit.ts proves the circuit large.ts prepared in the same cache, and
 * the HTTP benches use fixed ports, so they run one after the other. A bench with more than one
 * mode runs once per mode.
 */
const RUNS: ReadonlyArray<{ readonly file: string; readonly args: ReadonlyArray<string> }> = [
  ...["http.ts", "dispatch.ts", "http-floor.ts", "webhook-delivery.ts", "cli.ts", "upload.ts", "artifact-cache.ts", "claim-check.ts", "fair-claims.ts", "metadata-filter.ts"]
    .map((name) => ({ file: `packages/server/bench/${name}`, args: ["--smoke"] })),
  { file: "packages/server/bench/http.ts", args: ["--smoke", "--mixed"] },
  { file: "packages/testkit/bench/retry-walk.ts", args: ["--smoke"] },
  ...["large.ts", "phase2.ts", "prover.ts", "setup.ts", "systems.ts", "tables.ts", "threads.ts", "ultraHonk.ts", "verifications.ts", "verify.ts", "zkeyPoints.ts"]
    .map((name) => ({ file: `packages/proving/bench/${name}`, args: ["--smoke"] })),
  { file: "packages/server/bench/large-circuit.ts", args: ["--smoke"] }
]

const benchFiles = () =>
  readdirSync(join(ROOT, "packages")).flatMap((pkg) => {
    const dir = join(ROOT, "packages", pkg, "bench")
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return []
    return readdirSync(dir).filter((name) => /\.(ts|mjs)$/.test(name) && !name.endsWith(".d.ts")).map((name) => relative(ROOT, join(dir, name)))
  })

// The benchmark circuits' cache, fresh for each run: a stale one could hide a bench that cannot build its circuit.
const cache = mkdtempSync(join(tmpdir(), "mzk-bench-smoke-"))
afterAll(() => rmSync(cache, { recursive: true, force: true }))

const smoke = (file: string, args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly output: string }>((resolve) => {
    execFile(process.execPath, ["--import", "tsx", file, ...args], {
      cwd: ROOT,
      env: { ...process.env, MZK_BENCH_CACHE: cache },
      maxBuffer: 64 << 20,
      timeout: 300_000
    }, (error, stdout, stderr) => resolve({ code: error === null ? 0 : (error.code as number | null) ?? null, output: `${stdout}\n${stderr}` }))
  })

describe("benchmarks", () => {
  it("every bench has a smoke mode, and every one runs here", () => {
    const benches = benchFiles().filter((file) => !HELPERS.has(file))
    expect(benches.filter((file) => !readFileSync(join(ROOT, file), "utf8").includes("smoke"))).toEqual([])
    expect([...new Set(RUNS.map((run) => run.file))].sort()).toEqual(benches.sort())
  })

  it("the HTTP bench's comparison tells a drifted answer from an alike one", () => {
    const answer = (body: object, id: string, remaining: number, reset: number): Answer => ({
      status: 202,
      headers: { "content-type": "application/json", "request-id": id, ratelimit: `"key";r=${remaining};t=${reset}`, date: "Mon, 30 Nov 2026 01:52:15 GMT" },
      body: JSON.stringify(body)
    })
    const proof = (id: string, at: string, priority: string) => ({ proof_id: id, priority, created_at: at, metadata: {} })
    const mzk = answer(proof("proof_01m8n2e6p3e3pdqrk8jxsbh6tk", "2026-11-30T01:52:15.555Z", "normal"), "req_01m8n2e6mys6h485xse1wqcerv", 59, 45)
    const alike = answer(proof("proof_01m8n2e6q0aaaaaaaaaaaaaaaa", "2026-11-30T01:52:16.001Z", "normal"), "req_01m8n2e6q1bbbbbbbbbbbbbbbb", 59, 44)
    expect(differences([{ name: "mzk", answer: mzk }, { name: "baseline", answer: alike }])).toBeUndefined()
    const drifted = answer(proof("proof_01m8n2e6q0aaaaaaaaaaaaaaaa", "2026-11-30T01:52:16.001Z", "high"), "req_01m8n2e6q1bbbbbbbbbbbbbbbb", 59, 44)
    expect(differences([{ name: "mzk", answer: mzk }, { name: "baseline", answer: drifted }])).toContain(`"priority":"high"`)
    const reordered = { ...alike, body: JSON.stringify({ priority: "normal", proof_id: "proof_01m8n2e6q0aaaaaaaaaaaaaaaa", created_at: "2026-11-30T01:52:16.001Z", metadata: {} }) }
    expect(differences([{ name: "mzk", answer: mzk }, { name: "baseline", answer: reordered }])).toBeDefined()
    const chargedTwice = answer(proof("proof_01m8n2e6q0aaaaaaaaaaaaaaaa", "2026-11-30T01:52:16.001Z", "normal"), "req_01m8n2e6q1bbbbbbbbbbbbbbbb", 58, 44)
    expect(differences([{ name: "mzk", answer: mzk }, { name: "baseline", answer: chargedTwice }])).toContain(`r=58`)
  })

  for (const { file, args } of RUNS) {
    it(`${file} ${args.join(" ")}`, async () => {
      const { code, output } = await smoke(file, args)
      expect(code, output.slice(-6000)).toBe(0)
    }, 360_000)
  }
})
