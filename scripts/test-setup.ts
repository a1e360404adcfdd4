// The suite's global setup, run once before any test file: the CLI's bundle (what `./mzk` runs, and
// the tests that start mzk as a process) made fresh now, so those files do not each find it stale
// and bundle it again at once.
// @ts-expect-error -- plain JavaScript without declarations
import { bundle, freshBundle } from "./bundle-cli.mjs"

export default async function setup() {
  if (freshBundle() === undefined) await bundle()
}
