// A vitest reporter that ends each run with its slowest test files, so a slow newcomer is seen at
// once (CI prints it too: it runs `pnpm test`). Time is the file's own, import included, not the
// run's wall time: files run side by side. Where MZK_FILE_CPU named a folder for scripts/file-cpu.ts,
// it also lists the files that cost the most CPU time, with their child processes.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import type { Reporter, TestModule, Vitest } from "vitest/node"

/** How many are listed: MZK_SLOWEST_FILES, else 15. */
const SHOWN = Number(process.env["MZK_SLOWEST_FILES"] ?? 15)

const seconds = (ms: number) => `${(ms / 1000).toFixed(1).padStart(6)} s`

export default class SlowestFiles implements Reporter {
  private root = process.cwd()

  onInit(vitest: Vitest) {
    this.root = vitest.config.root
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const timed = testModules.map((module) => {
      const { collectDuration, duration, environmentSetupDuration, prepareDuration, setupDuration } = module.diagnostic()
      const importing = environmentSetupDuration + prepareDuration + collectDuration + setupDuration
      return { file: module.relativeModuleId, total: importing + duration, importing }
    })
    timed.sort((a, b) => b.total - a.total)
    const lines = timed.slice(0, SHOWN).map(({ file, total, importing }) => `${seconds(total)}  (import ${seconds(importing).trim()})  ${file}`)
    process.stdout.write(`\n The ${Math.min(SHOWN, timed.length)} slowest test files of ${timed.length}:\n${lines.map((line) => `  ${line}\n`).join("")}\n`)
    this.printCpu()
  }

  private printCpu() {
    const dir = process.env["MZK_FILE_CPU"]
    if (dir === undefined || !existsSync(dir)) return
    const files = new Map<string, { own: number; children: number }>()
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) {
      for (const line of readFileSync(join(dir, name), "utf8").split("\n").filter(Boolean)) {
        const { file, own, children } = JSON.parse(line) as { file: string; own: number; children: number }
        const key = relative(this.root, file)
        const sum = files.get(key) ?? { own: 0, children: 0 }
        files.set(key, { own: sum.own + own, children: sum.children + children })
      }
    }
    const rows = [...files].map(([file, t]) => ({ file, ...t, total: t.own + t.children })).sort((a, b) => b.total - a.total)
    const all = rows.reduce((sum, r) => sum + r.total, 0)
    const lines = rows.slice(0, SHOWN).map((r) => `${seconds(r.total * 1000)}  (children ${seconds(r.children * 1000).trim()})  ${r.file}`)
    process.stdout.write(` CPU time of the test files: ${all.toFixed(0)} s in all; the ${Math.min(SHOWN, rows.length)} costliest:\n${lines.map((line) => `  ${line}\n`).join("")}\n`)
  }
}
