import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import semver from "semver"
import { describe, expect, it } from "vitest"

interface Manifest {
  readonly name: string
  readonly version: string
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
}

const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest
const testkitDir = fileURLToPath(new URL("..", import.meta.url))

/** The folder of `name` as Node finds it from `fromDir` (some packages export no package.json). */
const packageDir = (name: string, fromDir: string): string | undefined =>
  (createRequire(join(fromDir, "package.json")).resolve.paths(name) ?? [])
    .map((dir) => join(dir, name))
    .find((dir) => existsSync(join(dir, "package.json")))

/** What installing @mzk/testkit brings (its dependencies, not its devDependencies), each once, with the folder it lies in. */
const installedWith = (dir: string, seen = new Map<string, Manifest>()): Map<string, Manifest> => {
  const manifest = read(join(dir, "package.json"))
  const key = `${manifest.name}@${manifest.version}`
  if (seen.has(key)) return seen
  seen.set(key, manifest)
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    const found = packageDir(name, dir)
    if (found !== undefined) installedWith(found, seen)
  }
  return seen
}

describe("@mzk/testkit beside vitest 4", () => {
  const vitest = read(join(dirname(createRequire(import.meta.url).resolve("vitest/package.json")), "package.json"))

  it("runs here on vitest 4", () => {
    expect(semver.major(vitest.version)).toBe(4)
  })

  it("every peer range on vitest in what it installs accepts the installed vitest; @effect/vitest (vitest ^3.2) is not among them", () => {
    const installed = [...installedWith(testkitDir).values()]
    expect(installed.map((m) => m.name)).toContain("@mzk/core")
    expect(installed.map((m) => m.name)).not.toContain("@effect/vitest")
    expect(installed.map((m) => m.name)).not.toContain("vitest")
    for (const manifest of installed) {
      const range = manifest.peerDependencies?.["vitest"]
      if (range !== undefined) expect(semver.satisfies(vitest.version, range), `${manifest.name} wants vitest ${range}`).toBe(true)
    }
  })
})
