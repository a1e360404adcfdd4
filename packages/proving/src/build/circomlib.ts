import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, posix } from "node:path"

const require = createRequire(import.meta.url)
let circuits: string | null | undefined
/**
 * circomlib's circuits, which every build finds as `circomlib/circuits/…` in its library folder (see
 * buildJob.mjs); null where the optional package is not installed (source uploads are refused then).
 */
const circomlibCircuits = (): string | null => {
  if (circuits === undefined) {
    try {
      circuits = join(dirname(require.resolve("circomlib/package.json")), "circuits")
    } catch {
      circuits = null
    }
  }
  return circuits
}
const PREFIX = "circomlib/circuits/"

/**
 * Whether an include, taken from the build's library folder as circom takes it (`-l lib`), names a
 * circomlib file: `circomlib/circuits/comparators.circom` does, `circomlib/x.circom` does not.
 */
export const circomlibHas = (target: string): boolean => {
  const path = posix.normalize(target)
  const root = circomlibCircuits()
  if (!path.startsWith(PREFIX) || root === null) return false
  return statSync(join(root, path.slice(PREFIX.length)), { throwIfNoEntry: false })?.isFile() ?? false
}
