import { migrate } from "@mzk/adapters-sql"
import { openPostgres } from "@mzk/adapters-postgres"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { describePostgres, freshDatabaseUrl } from "./freshDatabase.js"

describePostgres("Postgres store", () => {
  it.scoped("migrate applies everything once; a second and a concurrent migrate do nothing", () =>
    Effect.gen(function*() {
      const { url } = yield* freshDatabaseUrl
      const a = yield* openPostgres({ connectionString: url })
      const b = yield* openPostgres({ connectionString: url })
      const [first, second] = yield* Effect.all([migrate(a.db, "postgres"), migrate(b.db, "postgres")], { concurrency: 2 })
      expect([...first.applied, ...second.applied]).toEqual(["0001_core"])
      expect((yield* migrate(a.db, "postgres")).applied).toEqual([])
    }), 30_000)
})
