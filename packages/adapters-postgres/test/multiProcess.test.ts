import { PostgresStore } from "@mzk/adapters-postgres"
import { Accounts, ApiKeys } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"

const run = promisify(execFile)
const root = fileURLToPath(new URL("../../..", import.meta.url))
const fixture = fileURLToPath(new URL("./fixtures/createKeys.ts", import.meta.url))

describePostgres("Postgres across processes", () => {
  it.scoped("two OS processes racing 25 key creates each on one account leave exactly 10 active keys", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const core = testCore(PostgresStore({ connectionString: url }), { seed: "parent" })
      const account = yield* Effect.flatMap(Accounts, (a) => a.create({ name: "Shared" })).pipe(Effect.provide(core))
      const children = yield* Effect.promise(() =>
        Promise.all([0, 1].map(() =>
          run(process.execPath, ["--import", "tsx", fixture, url, account.id, "25"], { cwd: root, timeout: 60_000 })
        ))
      )
      const outcomes = children.map((c) => JSON.parse(c.stdout.trim()) as { created: number; limited: number; pid: number })
      expect(new Set(outcomes.map((o) => o.pid)).size).toBe(2)
      expect(outcomes.reduce((n, o) => n + o.created, 0)).toBe(10)
      expect(outcomes.reduce((n, o) => n + o.limited, 0)).toBe(40)
      const listed = yield* Effect.flatMap(ApiKeys, (k) => k.list(account.id)).pipe(Effect.provide(core))
      expect(listed.total).toBe(10)
    }), 90_000)
})
