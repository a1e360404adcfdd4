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

/** Signals the browser's whole process group; nothing when it is already gone. */
const signalGroup = (browser: ChildProcess, signal: NodeJS.Signals) => {
  try {
    if (browser.pid !== undefined) process.kill(-browser.pid, signal)
  } catch {
    // ESRCH: the group has ended.
  }
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
      // Its own process group, so the browser's helper processes (zygote, renderers) end with it.
      ], { stdio: "ignore", detached: true })
      return { browser, profile }
    }),
    ({ browser, profile }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          if (browser.exitCode !== null || browser.signalCode !== null) return resolve()
          browser.once("exit", () => resolve())
          signalGroup(browser, "SIGTERM")
        })
      ).pipe(
        Effect.timeout("10 seconds"),
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => {
          // Whatever of the group is left (a helper that outlived the browser) goes too.
          signalGroup(browser, "SIGKILL")
          // A helper may still be writing to the profile for a moment (ENOTEMPTY): rmSync retries.
          rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 })
        }))
      )
  )
