// A vitest setup file that, where MZK_FILE_CPU names a folder, writes there the CPU time each test
// file used: its worker's threads and the child processes it started and reaped (`mzk serve`,
// build processes, compilers), from /proc. Wall time says little on a loaded machine where files
// run side by side; CPU time says what a file costs the run. scripts/slowest-files.ts lists them.
// A no-op without MZK_FILE_CPU, and off Linux.
import { appendFileSync, existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, expect } from "vitest"

const dir = process.env["MZK_FILE_CPU"]
const TICKS_PER_SECOND = 100

/** utime + stime of this process and cutime + cstime of its reaped children, in seconds. */
const cpu = (): { readonly own: number; readonly children: number } => {
  // The fields after the command's closing parenthesis: state is the first, utime the 12th.
  const stat = readFileSync("/proc/self/stat", "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number)
  return { own: (fields[11]! + fields[12]!) / TICKS_PER_SECOND, children: (fields[13]! + fields[14]!) / TICKS_PER_SECOND }
}

if (dir !== undefined && existsSync("/proc/self/stat")) {
  // Files that share a worker (isolate: false) count from where the previous one ended.
  const state = globalThis as { __mzkFileCpu?: ReturnType<typeof cpu> }
  state.__mzkFileCpu ??= cpu()
  afterAll(() => {
    const now = cpu()
    const before = state.__mzkFileCpu!
    state.__mzkFileCpu = now
    const line = { file: expect.getState().testPath ?? "unknown", own: now.own - before.own, children: now.children - before.children }
    appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify(line)}\n`)
  })
}
