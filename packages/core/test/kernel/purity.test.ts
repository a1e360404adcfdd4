import { describe, expect, it } from "@effect/vitest"
import { ESLint } from "eslint"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../..", import.meta.url))

/** The lint step is what keeps the core pure; prove it refuses what it must. */
describe("core purity lint rule", () => {
  const lint = async (code: string, file: string) => {
    const [result] = await new ESLint({ cwd: root }).lintText(code, { filePath: `${root}/${file}` })
    return result!.messages.filter((m) => m.ruleId === "no-restricted-imports").length
  }

  it("refuses adapters, drivers, platform packages and Node built-ins in packages/core", async () => {
    for (const source of ["@mzk/adapters-sql", "kysely", "better-sqlite3", "pg", "@effect/platform", "@effect/platform-node", "snarkjs", "node:crypto", "fs", "events"]) {
      expect(await lint(`import x from "${source}"\nexport default x\n`, "packages/core/src/probe.ts"), source).toBe(1)
    }
  })

  it("allows effect and the core's own modules, and leaves other packages alone", async () => {
    expect(await lint(`import { Effect } from "effect"\nimport { now } from "./time.js"\nexport { Effect, now }\n`, "packages/core/src/probe.ts")).toBe(0)
    expect(await lint(`import pg from "pg"\nexport default pg\n`, "packages/adapters-postgres/src/probe.ts")).toBe(0)
  })
})
