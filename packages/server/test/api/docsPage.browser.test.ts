import { HttpApi } from "@effect/platform"
import { MzkApi } from "@mzk/http"
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe } from "vitest"
import { startServer } from "../realServer.js"

const CHROMIUM = "/usr/bin/chromium"
const available = existsSync(CHROMIUM)
if (!available && process.env.CI !== undefined && process.env.CI !== "false") {
  throw new Error(`The docs page test needs Debian's chromium at ${CHROMIUM} in CI (apt-get install chromium)`)
}
if (!available) console.warn(`Skipping the docs page browser test: no ${CHROMIUM} (apt-get install chromium to enable it)`)

const run = promisify(execFile)

interface Visit {
  /** The page after its scripts ran, with the inlined scripts removed: only what was rendered. */
  readonly dom: string
  /** Every URL the browser started a request for on the page's behalf, from Chromium's net log. */
  readonly requests: ReadonlyArray<string>
  /** The page's console, where Chromium reports what the Content-Security-Policy refused. */
  readonly console: ReadonlyArray<string>
}

interface NetLog {
  readonly constants: { readonly logEventTypes: Record<string, number> }
  readonly events: ReadonlyArray<{ readonly type: number; readonly params?: { readonly url?: string; readonly network_isolation_key?: string } }>
}

/**
 * Opens `url` in headless Chromium with its net log on. The browser's own traffic (update checks,
 * account lookups) is in the log too; a request is the page's when its network isolation key is
 * the page's site, so a font from fonts.scalar.com or a call to api.scalar.com counts, while
 * Chromium's housekeeping does not.
 */
const visit = async (url: string): Promise<Visit> => {
  const profile = mkdtempSync(join(tmpdir(), "mzk-chromium-"))
  const netLog = join(profile, "net-log.json")
  try {
    const { stdout, stderr } = await run(CHROMIUM, [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      // Chromium asks Google how to autofill a page's form fields (the key field "Test Request"
      // shows), under the page's isolation key; that is the browser's doing, not the page's.
      "--disable-features=AutofillServerCommunication",
      `--user-data-dir=${profile}`, `--log-net-log=${netLog}`, "--enable-logging=stderr", "--v=0",
      "--virtual-time-budget=10000", "--dump-dom", url
    ], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 })
    const log = JSON.parse(readFileSync(netLog, "utf8")) as NetLog
    const start = log.constants.logEventTypes["URL_REQUEST_START_JOB"]
    const site = `${new URL(url).protocol}//${new URL(url).hostname}`
    const requests = log.events
      .filter((event) => event.type === start && event.params?.url !== undefined && event.params.network_isolation_key?.split(" ")[0] === site)
      .map((event) => event.params!.url!)
    return {
      dom: stdout.replace(/<script[\s\S]*?<\/script>/g, ""),
      requests,
      console: stderr.split("\n").filter((line) => line.includes(":CONSOLE"))
    }
  } finally {
    // Chromium's helper processes may still write to the profile just after it exits: retried.
    rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 })
  }
}

;(available ? describe : describe.skip)("the docs page in headless Chromium", () => {
  it.scopedLive("renders every endpoint of the API, and makes no request outside the server", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* startServer()
      const { console: messages, dom, requests } = yield* Effect.promise(() => visit(`${baseUrl}/docs`))
      expect(dom).toContain("mzk proof service API")
      const paths = new Set<string>()
      HttpApi.reflect(MzkApi, { onGroup: () => undefined, onEndpoint: ({ endpoint }) => void paths.add(endpoint.path.replace(/:(\w+)/g, "{$1}")) })
      for (const path of paths) expect(dom, path).toContain(path)
      // The key is asked for where a request is tried (the bearer scheme is chosen, not "none"),
      // and the sidebar has one "Webhooks": the events mzk sends; the endpoints that manage them are
      // "Webhook endpoints".
      expect(dom).not.toContain("No authentication selected")
      expect(dom).toContain("Webhook endpoints")
      // Scalar's sidebar entries (one per tag) and section headings: each name once.
      const sidebar = [...dom.matchAll(/class="line-clamp-1 w-full text-left font-medium break-all">([^<]+)</g)].map((match) => match[1]!.trim())
      expect(sidebar).toContain("Webhook endpoints")
      expect(sidebar.filter((entry, i) => sidebar.indexOf(entry) !== i)).toEqual([])
      expect(dom.match(/<h2 [^>]*>\s*Webhooks\b/g) ?? []).toHaveLength(1)

      // The log did record the page's requests (so an empty list of strangers means something)...
      expect(requests).toContain(`${baseUrl}/docs`)
      // ...and none of them left the server's origin.
      expect(requests.filter((request) => new URL(request).origin !== baseUrl)).toEqual([])
      // Nor did the page try and get refused by its Content-Security-Policy (a refused request
      // never reaches the net log): Scalar was asked for nothing from elsewhere.
      expect(messages.filter((line) => /Content Security Policy|Refused to/i.test(line))).toEqual([])
    }), 90_000)
})
