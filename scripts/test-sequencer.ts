// The order the suite's files start in. Both cores stay busy best when the longest files start
// first and the short ones fill the gaps at the end: a long file started late is the run's tail.
// Vitest orders by the durations it remembers from an earlier run, which a clean clone (CI) has
// not got; there it would start files in glob order, and the library's quick in-process files
// before every integration file. So: the files known to take minutes first, then the integration
// files by remembered duration (else size), then the in-process files.
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Files that take a minute or more on a 2-core machine, longest first (the pack test installs
 * the packed packages from the registry and compiles the native prover: several minutes).
 */
const LONGEST = [
  "packages/server/test/packaging/pack.test.ts",
  "packages/proving/test/build/build.test.ts",
  "packages/server/test/proving/provingMatrix.e2e.test.ts",
  "packages/server/test/circuits/largeCircuit.e2e.test.ts",
  "packages/adapters-postgres/test/multiProcessWorkers.test.ts",
  "packages/proving/test/prove/native.test.ts",
  "packages/server/test/circuits/circuitsWorkers.test.ts"
]

/** The project of the library's quick in-process files (vitest.config.ts), started last. */
export const IN_PROCESS_PROJECT = "in-process"

export default class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const remembered = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const known = LONGEST.indexOf(relative(this.ctx.config.root, spec.moduleId))
      if (known >= 0) return known
      return spec.project.name === IN_PROCESS_PROJECT ? LONGEST.length + 1 : LONGEST.length
    }
    // Array.prototype.sort is stable: within a rank, vitest's own order stays.
    return remembered.sort((a, b) => rank(a) - rank(b))
  }
}
