import { describe, expect, it } from "@effect/vitest"
import { Effect, HashMap, Logger } from "effect"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { prepareDevelopmentPtau } from "../../src/build/compiler.js"

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** Every line logged while `effect` runs, as the server's logger would receive them. */
const logsOf = <A, E>(effect: Effect.Effect<A, E>) => {
  const lines: Array<Line> = []
  const capture = Logger.make(({ annotations, logLevel, message }) => {
    lines.push({
      level: logLevel.label,
      message: (Array.isArray(message) ? message : [message]).join(" "),
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return Effect.map(Effect.provide(effect, Logger.replace(Logger.defaultLogger, capture)), (value) => ({ value, lines }))
}

describe("the development powers of tau", () => {
  it.live("logs its start, each step of the ceremony with its time, and its end with its size, the first time it is made", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mzk-ptau-progress-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const options = { developmentPtau: { power: 4, dir }, timeoutMs: 120_000, memoryBytes: 2 * 2 ** 30 }
      const { lines, value: file } = yield* logsOf(prepareDevelopmentPtau(options))
      expect(file).toBe(join(dir, "dev_pot4.ptau"))
      expect(lines.map((line) => `${line.level} ${line.message}`)).toEqual([
        "INFO development powers of tau: making power 4 (one local contribution, 3 steps; minutes at power 12 and above)",
        "INFO development powers of tau: step 1 of 3, new accumulator",
        "INFO development powers of tau: step 1 of 3, new accumulator, done",
        "INFO development powers of tau: step 2 of 3, contribution",
        "INFO development powers of tau: step 2 of 3, contribution, done",
        "INFO development powers of tau: step 3 of 3, prepare phase 2",
        "INFO development powers of tau: step 3 of 3, prepare phase 2, done",
        "INFO development powers of tau: power 4 ready"
      ])
      expect(lines[0]!.annotations).toEqual({ ptau_power: 4, path: file })
      const finished = lines.filter((line) => line.message.endsWith(", done")).map((line) => line.annotations)
      expect(finished.map((a) => a["step"])).toEqual(["new accumulator", "contribution", "prepare phase 2"])
      for (const step of finished) {
        expect(step["step_ms"]).toBeGreaterThanOrEqual(0)
        expect(step["elapsed_ms"]).toBeGreaterThanOrEqual(step["step_ms"] as number)
      }
      const done = lines.at(-1)!.annotations
      expect(done).toMatchObject({ ptau_power: 4, path: file, bytes: statSync(file).size })
      expect(done["total_ms"]).toBeGreaterThanOrEqual(finished.at(-1)!["elapsed_ms"] as number)

      // Cached from now on: made once, logged once.
      const again = yield* logsOf(prepareDevelopmentPtau(options))
      expect(again.lines).toEqual([])
    }).pipe(Effect.scoped), 120_000)
})
