import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import LongestFirst, { IN_PROCESS_PROJECT } from "./scripts/test-sequencer.js"

// Workspace packages resolve to their TypeScript sources (the "@mzk/source" export condition),
// so tests never need a build and never run a stale dist/. Vite resolves with the ssr
// conditions (Vitest also hands them to its worker processes as --conditions); processes that
// tests spawn themselves (`node --import tsx …`) get the condition through NODE_OPTIONS.
const SOURCE = "@mzk/source"
const serverConditions = [SOURCE, "module", "node", "development|production"]

/**
 * Tests of the library in one process, over in-memory SQLite and fake provers. Like the
 * integration files (servers on real ports, `./mzk` processes, Postgres, the native prover), their
 * files share a worker's loaded modules (isolate: false): importing effect, the packages and
 * snarkjs again for each file took 208–220 s a run, summed over the files. Each file
 * builds its own layers and servers and closes them (a test that left a server running would
 * log into the next file's output), and each starts with @effect/vitest's `it` as it ships
 * (scripts/effect-vitest-reset.ts), so nothing is shared but code; the two projects are apart so
 * that the quick library files can fill the gaps at the end of a run (scripts/test-sequencer.ts).
 */
const IN_PROCESS = ["core", "http", "testkit", "webhooks", "client", "adapters-sql"].map((name) => `packages/${name}/test/**/*.test.ts`)

/**
 * Files run at once. Most of the suite waits on processes, sockets and databases rather than
 * computing, so one more than the cores keeps both busy; vitest's default here is one fewer.
 */
const workers = Math.max(2, availableParallelism() + 1)

/**
 * Every benchmark in its smoke mode, a few minutes of processes that check the benches still run
 * and agree with their baselines: `pnpm bench:smoke` (and CI, after the suite) runs them; the
 * suite itself is for behaviour, and stays minutes shorter without them.
 */
const BENCH_SMOKE = "scripts/test/benchSmoke.test.ts"
const benchSmoke = process.env["MZK_BENCH_SMOKE"] === "1"

export default defineConfig({
  resolve: { conditions: [SOURCE, "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: serverConditions } },
  test: {
    env: { NODE_OPTIONS: [process.env["NODE_OPTIONS"], `--conditions=${SOURCE}`].filter(Boolean).join(" ") },
    // Guards against a hang, not speed goals: a test that takes 10 s alone takes several times that
    // while another suite runs beside this one on two cores.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    maxWorkers: workers,
    globalSetup: ["./scripts/test-setup.ts"],
    // Each file's CPU time where MZK_FILE_CPU names a folder (a no-op otherwise); @effect/vitest's
    // `it` as it ships, whatever an earlier file in the same worker did to it.
    setupFiles: ["./scripts/file-cpu.ts", "./scripts/effect-vitest-reset.ts"],
    reporters: ["default", "./scripts/slowest-files.ts"],
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: IN_PROCESS_PROJECT, include: IN_PROCESS, isolate: false } },
      {
        extends: true,
        test: {
          name: "integration",
          include: benchSmoke ? [BENCH_SMOKE] : ["packages/*/test/**/*.test.ts", "scripts/test/**/*.test.ts"],
          exclude: benchSmoke ? [] : [...IN_PROCESS, BENCH_SMOKE],
          isolate: false
        }
      }
    ]
  }
})
