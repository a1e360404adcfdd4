import { HttpApi } from "@effect/platform"
import { MzkApi } from "@mzk/http"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe } from "vitest"
import { startServer } from "./realServer.js"

const CHROMIUM = "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available && process.env.CI !== undefined && process.env.CI !== "false") {
  throw new Error(`The docs page test needs Debian's chromium at ${CHROMIUM} in CI (apt-get install chromium)`)
}
if (!available) console.warn(`Skipping the docs page browser test: no ${CHROMIUM} (apt-get install chromium to enable it)`)

const run = promisify(execFile)

/** The page after its scripts ran, with the inlined scripts removed: only what was rendered. */
const renderedDom = async (url: string) => {
  const profile = mkdtempSync(join(tmpdir(), "mzk-chromium-"))
  try {
    const { stdout } = await run(CHROMIUM, [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      `--user-data-dir=${profile}`, "--virtual-time-budget=10000", "--dump-dom", url
    ], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 })
    return stdout.replace(/<script[\s\S]*?<\/script>/g, "")
  } finally {
    rmSync(profile, { recursive: true, force: true })
  }
}

;(available ? describe : describe.skip)("the docs page in headless Chromium", () => {
  it.scopedLive("renders every endpoint of the API", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer()
      const dom = yield* Effect.promise(() => renderedDom(`${baseUrl}/docs`))
      expect(dom).toContain("mzk proof service API")
      const paths = new Set<string>()
      HttpApi.reflect(MzkApi, { onGroup: () => undefined, onEndpoint: ({ endpoint }) => void paths.add(endpoint.path.replace(/:(\w+)/g, "{$1}")) })
      for (const path of paths) expect(dom, path).toContain(path)
    }), 90_000)
})
