/**
 * A prebuilt upload's cost to the server (not a test): `mzk serve --no-workers` in its own process
 * on SQLite (a temporary file) and PostgreSQL (a fresh database on 127.0.0.1:5432; skipped when
 * unreachable), sent a prebuilt upload whose zkey part is `MiB` mebibytes, generated as it is sent.
 * Prints the upload's throughput (the whole request, stored and answered 202) and the growth of
 * the server's peak resident memory (`VmHWM`, reset before the upload) over its resident memory
 * before it:
 *
 *   pnpm bench packages/server/bench/upload.ts [MiB=512] [rounds=2]
 *
 * `--smoke` (CI's check that the bench runs, scripts/test/benchSmoke.test.ts): one round of 1 MiB,
 * and PostgreSQL must be reachable.
 */
import { Effect } from "effect"
import { availableParallelism } from "node:os"
import { performance } from "node:perf_hooks"
import { freshDatabaseUrl } from "../../adapters-postgres/test/freshDatabase.js"
import { memoryOf, resetPeak, sendBigUpload } from "../test/circuits/bigUpload.js"
import { createAccount, serveProcess, tempSqlite } from "../test/processes.js"

const MiB = 1024 * 1024
const SMOKE = process.argv.includes("--smoke")
const SIZE_MIB = SMOKE ? 1 : Number(process.argv[2] ?? 512)
const ROUNDS = SMOKE ? 1 : Number(process.argv[3] ?? 2)

const run = (store: string, database: string) =>
  Effect.gen(function*() {
    const { api_key } = createAccount(database, "Upload bench")
    const server = yield* serveProcess(database, { args: ["--no-workers", "--max-upload-size", "2GiB", "--max-compiling-per-account", "100"] })
    const pid = server.child.pid!
    const warm = yield* Effect.promise(() => sendBigUpload(server.baseUrl, api_key, { name: "warm-up", zkeyBytes: 4 * MiB }))
    if (warm.status !== 202) throw new Error(`warm-up upload answered ${warm.status}: ${warm.body}`)
    for (let round = 1; round <= ROUNDS; round++) {
      const before = memoryOf(pid)
      const reset = resetPeak(pid)
      const start = performance.now()
      const sent = yield* Effect.promise(() => sendBigUpload(server.baseUrl, api_key, { name: `big-${round}`, zkeyBytes: SIZE_MIB * MiB }))
      const seconds = (performance.now() - start) / 1000
      if (sent.status !== 202) throw new Error(`upload answered ${sent.status}: ${sent.body}`)
      const after = memoryOf(pid)
      const growth = after.peak - before.rss
      console.log(
        `${store.padEnd(8)} round ${round}: ${SIZE_MIB} MiB zkey part in ${seconds.toFixed(1)} s = ${(SIZE_MIB / seconds).toFixed(0)} MiB/s; ` +
          `server RSS before ${(before.rss / MiB).toFixed(0)} MiB, peak during ${(after.peak / MiB).toFixed(0)} MiB ` +
          `(growth ${(growth / MiB).toFixed(0)} MiB${reset ? "" : ", peak not reset: whole-life peak"})`
      )
    }
  })

console.log(`upload bench: ${SIZE_MIB} MiB prebuilt zkey part, ${ROUNDS} rounds per store, ${availableParallelism()} cores, node ${process.version}`)
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const { database } = yield* tempSqlite("upload-bench")
  yield* run("sqlite", database)
})))
await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const fresh = yield* Effect.either(freshDatabaseUrl)
  if (fresh._tag === "Left") {
    // A smoke run (CI, where PostgreSQL runs) must fail when this side cannot run.
    if (SMOKE) throw fresh.left
    return console.log("postgres: skipped (127.0.0.1:5432 unreachable)")
  }
  yield* run("postgres", fresh.right.url)
})))
