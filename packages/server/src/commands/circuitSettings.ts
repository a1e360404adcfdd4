import type { CircuitsOptions } from "../mzk.js"
import { circuitsGroup, optionsOf, type SettingValues } from "./settings.js"

/**
 * How this process builds and caches accounts' circuits, and their limits: the same options on
 * `serve`, `worker` and `circuits add` (see settings.ts for each flag's variable and default).
 */
export const circuitSettings = optionsOf(circuitsGroup)
export type CircuitSettings = SettingValues<typeof circuitsGroup>

/** The parsed options as the composition root takes them. */
export const circuitsOptions = (settings: CircuitSettings): CircuitsOptions => ({
  ptau: settings.ptau,
  noirCrs: settings.noirCrs,
  developmentPtau: settings.devPtau ? { power: settings.devPtauPower, dir: settings.devPtauDir } : undefined,
  cacheDir: settings.cacheDir,
  proverMemoryBytes: settings.proverMemory,
  maxUploadBytes: settings.maxUploadSize,
  maxCircuitsPerAccount: settings.maxCircuitsPerAccount,
  maxCompilingPerAccount: settings.maxCompilingPerAccount,
  buildConcurrency: settings.buildConcurrency,
  buildTimeoutMs: settings.buildTimeout,
  buildMemoryBytes: settings.buildMemory,
  // A dead worker's build is taken over this long after its time limit ran out: a quarter of
  // the limit, at most a minute, so short limits (and the tests' takeovers) do not wait long.
  leaseMarginMs: Math.min(60_000, Math.ceil(settings.buildTimeout / 4))
})
