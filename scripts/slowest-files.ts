// A vitest reporter that ends each run with its slowest test files, so a slow newcomer is seen at
// once (CI prints it too: it runs `pnpm test`). Time is the file's own, import included, not the
// run's wall time: files run side by side.
import type { Reporter, TestModule } from "vitest/node"

/** How many are listed: MZK_SLOWEST_FILES, else 15. */
const SHOWN = Number(process.env["MZK_SLOWEST_FILES"] ?? 15)

const seconds = (ms: number) => `${(ms / 1000).toFixed(1).padStart(6)} s`

export default class SlowestFiles implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const timed = testModules.map((module) => {
      const { collectDuration, duration, environmentSetupDuration, prepareDuration, setupDuration } = module.diagnostic()
      const importing = environmentSetupDuration + prepareDuration + collectDuration + setupDuration
      return { file: module.relativeModuleId, total: importing + duration, importing }
    })
    timed.sort((a, b) => b.total - a.total)
    const lines = timed.slice(0, SHOWN).map(({ file, total, importing }) => `${seconds(total)}  (import ${seconds(importing).trim()})  ${file}`)
    process.stdout.write(`\n The ${Math.min(SHOWN, timed.length)} slowest test files of ${timed.length}:\n${lines.map((line) => `  ${line}\n`).join("")}\n`)
  }
}
