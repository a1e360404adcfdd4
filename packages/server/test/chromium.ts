import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Debian's Chromium, which the browser tests drive headless. */
export const CHROMIUM = "/usr/bin/chromium"

/**
 * Whether the browser tests can run here: CI must have Chromium (a skipped test there would hide
 * a failure); elsewhere they are skipped with a warning naming the package to install.
 */
export const chromiumAvailable = (what: string): boolean => {
  const available = existsSync(CHROMIUM)
  if (!available && process.env.CI !== undefined && process.env.CI !== "false") {
    throw new Error(`${what} needs Debian's chromium at ${CHROMIUM} in CI (apt-get install chromium)`)
  }
  if (!available) console.warn(`Skipping ${what}: no ${CHROMIUM} (apt-get install chromium to enable it)`)
  return available
}

/**
 * `url` open in headless Chromium for the test's scope, with a profile of its own: the page runs
 * as long as the scope does (for a page that works on its own and reports through the network,
 * rather than one whose DOM is dumped once loaded). The browser and its profile go with the scope.
 */
export const openInChromium = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const profile = mkdtempSync(join(tmpdir(), "mzk-chromium-"))
      const browser: ChildProcess = spawn(CHROMIUM, [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        `--user-data-dir=${profile}`, url
      ], { stdio: "ignore" })
      return { browser, profile }
    }),
    ({ browser, profile }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          if (browser.exitCode !== null || browser.signalCode !== null) return resolve()
          browser.once("exit", () => resolve())
          browser.kill("SIGTERM")
        })
      ).pipe(
        Effect.timeout("10 seconds"),
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => {
          if (browser.exitCode === null && browser.signalCode === null) browser.kill("SIGKILL")
          // Chromium's helper processes may still write to the profile for a moment after the browser
          // exits (ENOTEMPTY): rmSync retries with backoff.
          rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 })
        }))
      )
  )
