import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, posix } from "node:path"

const require = createRequire(import.meta.url)
/** circomlib's circuits, which every build finds as `circomlib/circuits/…` in its library folder (see buildJob.mjs). */
const CIRCUITS = join(dirname(require.resolve("circomlib/package.json")), "circuits")
const PREFIX = "circomlib/circuits/"

/**
 * Whether an include, taken from the build's library folder as circom takes it (`-l lib`), names a
 * circomlib file: `circomlib/circuits/comparators.circom` does, `circomlib/x.circom` does not.
 */
export const circomlibHas = (target: string): boolean => {
  const path = posix.normalize(target)
  if (!path.startsWith(PREFIX)) return false
  return statSync(join(CIRCUITS, path.slice(PREFIX.length)), { throwIfNoEntry: false })?.isFile() ?? false
}
