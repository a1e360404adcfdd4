import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { archiveSource, readArchive } from "../src/wire/archive.js"
import { type ArchiveEntry, tarGz, zip } from "./archives.js"

const LIMITS = { maxBytes: 2 ** 20, maxFiles: 1000 }
const read = (bytes: Uint8Array) => Effect.runPromise(Effect.either(readArchive(bytes, LIMITS)))
const many = (count: number) => Array.from({ length: count }, (_, i): ArchiveEntry => ({ path: `f/${i}.circom`, content: `// ${i}` }))

describe("readArchive", () => {
  it("takes as many files as an upload has parts, and not one more", async () => {
    for (const make of [zip, tarGz]) {
      const full = await read(make(many(1000)))
      expect(Either.isRight(full) && Object.keys(full.right.files).length).toBe(1000)
      expect(Either.isLeft(await read(make(many(1001))))).toBe(true)
    }
  })
})

describe("archiveSource", () => {
  const files = (paths: ReadonlyArray<string>) => ({ format: "zip" as const, files: Object.fromEntries(paths.map((p) => [p, new Uint8Array()])) })
  const source = (paths: ReadonlyArray<string>, main?: string) => Effect.runPromise(Effect.either(archiveSource(files(paths), main)))

  it("a Noir project keeps Nargo.toml and src/**/*.nr only, from the root or the one folder", async () => {
    const noir = await source(["p/Nargo.toml", "p/src/main.nr", "p/src/lib/m.nr", "p/README.md", "p/target/p.json", "p/src/notes.txt"])
    expect(Either.isRight(noir) && noir.right.kind === "noir" && Object.keys(noir.right.files).sort()).toEqual(["Nargo.toml", "src/lib/m.nr", "src/main.nr"])
  })

  it("never reinterprets a path found as given: a sole folder is dropped only when main is named inside it", async () => {
    const asGiven = await source(["src/main.circom", "src/src/main.circom"], "src/main.circom")
    expect(Either.isRight(asGiven) && Object.keys(asGiven.right.files).sort()).toEqual(["src/main.circom", "src/src/main.circom"])
    const inside = await source(["src/main.circom", "src/lib/x.circom"], "lib/x.circom")
    expect(Either.isRight(inside) && inside.right.kind === "circom" && [inside.right.main, Object.keys(inside.right.files).sort()]).toEqual([
      "lib/x.circom",
      ["lib/x.circom", "main.circom"]
    ])
    // Two top-level folders: nothing is dropped, and a path inside one of them is not found.
    expect(Either.isLeft(await source(["a/main.circom", "b/x.circom"], "main.circom"))).toBe(true)
  })
})
