import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { archiveSource, readArchive } from "../../src/formats/archive.js"
import { type ArchiveEntry, tarGz, zip } from "../../../http/test/archives.js"

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

/** What a refusal says, `<path>: <message>` per detail; or the files' paths if the archive was read. */
const outcome = async (bytes: Uint8Array) => {
  const archive = await read(bytes)
  return Either.isRight(archive) ? Object.keys(archive.right.files) : (archive.left.details ?? []).map((d) => `${d.path}: ${d.message}`)
}

const utf8Bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>) =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))))
/** `lib/` + C3 28 (a lead byte with no continuation) + `.circom`: no UTF-8 decoder reads it. */
const NOT_UTF8 = utf8Bytes("lib/", [0xc3, 0x28], ".circom")

describe("readArchive: paths the build can lay out", () => {
  it("refuses a path inside another that is a file, naming the entry, in a zip and a tar alike", async () => {
    const entries: ReadonlyArray<ArchiveEntry> = [
      { path: "main.circom", content: "// main" },
      { path: "lib.circom", content: "// a file" },
      { path: "lib.circom/x.circom", content: "// in a folder of that name" },
      { path: "./a/b", content: "// a file" },
      { path: "a/b/c/d.circom", content: "// deeper" }
    ]
    for (const make of [zip, tarGz]) {
      expect(await outcome(make(entries))).toEqual([
        'archive: entry "lib.circom/x.circom": the path "lib.circom/x.circom" is inside "lib.circom", which is a file, not a folder',
        'archive: entry "a/b/c/d.circom": the path "a/b/c/d.circom" is inside "a/b", which is a file, not a folder'
      ])
    }
  })

  it("takes a folder entry beside a file of another name, and a folder entry of a file's name that holds nothing", async () => {
    for (const make of [zip, tarGz]) {
      const files = await outcome(make([{ path: "lib/", mode: 0o040755, type: "Directory" }, { path: "lib/x.circom", content: "" }, { path: "lib.circom", content: "" }]))
      expect(files).toEqual(["lib/x.circom", "lib.circom"])
    }
  })
})

describe("readArchive: names as the archive holds them", () => {
  it("refuses a zip entry flagged UTF-8 whose name is not, rather than keep it with U+FFFD", async () => {
    expect(await outcome(zip([{ path: "main.circom", content: "" }, { path: "x", rawName: NOT_UTF8, content: "" }]))).toEqual([
      'archive: entry "lib/\ufffd(.circom": its name is not valid UTF-8'
    ])
    // A name in UTF-8 is read as such.
    expect(await outcome(zip([{ path: "lib/ünï/証明.circom", content: "" }]))).toEqual(["lib/ünï/証明.circom"])
  })

  it("refuses a tar name that is not UTF-8, in its header or in a pax record (which node-tar dropped for the header's name)", async () => {
    expect(await outcome(tarGz([{ path: "x", rawName: NOT_UTF8, content: "" }]))).toEqual(['archive: entry "lib/\ufffd(.circom": its name is not valid UTF-8'])
    expect(await outcome(tarGz([{ path: "lib/x.circom", pax: { path: NOT_UTF8 }, content: "" }]))).toEqual([
      'archive: entry "lib/\ufffd(.circom": its name is not valid UTF-8'
    ])
  })

  it("refuses a pax name holding a NUL as a whole, where node-tar cut it there", async () => {
    expect(await outcome(tarGz([{ path: "lib/a", pax: { path: "lib/a\u0000b.circom" }, content: "" }]))).toEqual([
      'archive: entry "lib/a\\u0000b.circom": the path "lib/a\\u0000b.circom" holds control characters'
    ])
  })

  it("reads a pax name as it is otherwise: long, and in UTF-8, and applies it to its entry only", async () => {
    const long = `lib/${"ü".repeat(60)}/${"x".repeat(120)}.circom`
    expect(await outcome(tarGz([{ path: "short", pax: { path: long, mtime: "0" }, content: "" }, { path: "next.circom", content: "" }]))).toEqual([
      long,
      "next.circom"
    ])
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
