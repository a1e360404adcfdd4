// A vitest setup file that counts the assertions each test file executed (`expect` calls, soft and
// inside properties included: vitest's own `assertionCalls`) and writes one line per file to the
// folder MZK_ASSERTION_COUNTS names. scripts/count-assertions.mjs runs the suite with it.
import { appendFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, afterEach, expect } from "vitest"

const dir = process.env["MZK_ASSERTION_COUNTS"]
let calls = 0
afterEach(() => {
  calls += expect.getState().assertionCalls
})
afterAll(() => {
  if (dir === undefined) return
  const file = expect.getState().testPath ?? "unknown"
  appendFileSync(join(dir, `${process.pid}.jsonl`), `${JSON.stringify({ file, calls })}\n`)
  calls = 0
})
