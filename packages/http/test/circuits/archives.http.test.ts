import { type AccountId, ArtifactsRepo, CircuitsRepo } from "@mzk/core"
import { testCore } from "@mzk/testkit"
import { Effect, ManagedRuntime, Option } from "effect"
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ArchiveEntry, lyingZip, tar, tarGz, tarGzBomb, zip } from "../archives.js"
import { detailPaths, type Harness, settled, SUM_MAIN } from "../helpers.js"
import { coreWithBuilds, expectEnvelope, harnessOver, makeHarness } from "../support.js"

const MUL = "pragma circom 2.1.6;\ntemplate Mul() { signal input a; signal input b; signal output c; c <== a * b; }\n"
/** SUM_MAIN's sources as an archive's entries: `sum.circom` includes `lib/mul.circom`. */
const SOURCES: ReadonlyArray<ArchiveEntry> = [{ path: "sum.circom", content: SUM_MAIN }, { path: "lib/mul.circom", content: MUL }]

let h: Harness
beforeAll(async () => {
  h = await makeHarness()
})
afterAll(() => h.close())

interface ArchiveUpload {
  readonly name?: string
  readonly archive?: Uint8Array
  /** A text field, or `{ file }`: sent as a file part. */
  readonly main?: string | { readonly file: string }
  readonly filename?: string
  readonly extra?: ReadonlyArray<readonly [string, string | Blob, string?]>
}

/** `POST /api/v1/circuits` as `curl -F name=… -F archive=@sources.tgz -F main=…` sends it, over the harness's port. */
const uploadArchive = async (target: Harness, token: string, upload: ArchiveUpload) => {
  const form = new FormData()
  form.append("name", upload.name ?? "archived")
  if (upload.archive !== undefined) form.append("archive", new Blob([upload.archive], { type: "application/octet-stream" }), upload.filename ?? "sources.tgz")
  if (typeof upload.main === "string") form.append("main", upload.main)
  else if (upload.main !== undefined) form.append("main", new Blob([upload.main.file]), "sum.circom")
  for (const [name, value, filename] of upload.extra ?? []) {
    if (typeof value === "string") form.append(name, value)
    else form.append(name, value, filename)
  }
  const response = await fetch(`${target.baseUrl}/api/v1/circuits`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
  const text = await response.text()
  return { status: response.status, headers: response.headers, text, json: JSON.parse(text) }
}

/** What storage holds of an account's circuit's sources: its main file and its files by path, as text. */
const stored = (account: AccountId, name: string) =>
  h.run(Effect.gen(function*() {
    const circuit = Option.getOrThrow(yield* (yield* CircuitsRepo).getByName(account, name))
    const source = circuit.source
    if (source.kind !== "circom") return { kind: source.kind }
    const files: Record<string, string> = {}
    for (const [path, digest] of Object.entries(source.files)) {
      files[path] = new TextDecoder().decode(Option.getOrThrow(yield* (yield* ArtifactsRepo).get(digest)))
    }
    return { kind: source.kind, main: source.main, files }
  }))

const messages = (reply: { json: any }) => (reply.json.error.details as Array<{ path: string; message: string }>).map((d) => `${d.path}: ${d.message}`)

describe("POST /api/v1/circuits with an archive (multipart `archive` + `main`)", () => {
  it("a zip and a gzip'd tar become the same files a part per file makes, built as such", async () => {
    const { account, key } = await h.newAccount()
    for (const [name, archive, filename] of [["zipped", zip(SOURCES), "sources.zip"], ["tarred", tarGz(SOURCES), "sources.tar.gz"]] as const) {
      const reply = await uploadArchive(h, key, { name, archive, filename, main: "sum.circom" })
      expect(reply.status, reply.text).toBe(202)
      expect(reply.json).toMatchObject({ name, status: "compiling" })
      expect((await settled(h, key, name)).json).toMatchObject({ status: "ready", public_signals: ["z", "y"] })
      expect(await stored(account, name)).toEqual({ kind: "circom", main: "sum.circom", files: { "sum.circom": SUM_MAIN, "lib/mul.circom": MUL } })
    }
  })

  it("the format is read from the bytes, not the filename; folders are skipped and a leading ./ dropped", async () => {
    const { account, key } = await h.newAccount()
    const dotted = tarGz([{ path: "./", type: "Directory" }, { path: "./lib/", type: "Directory" }, ...SOURCES.map((e) => ({ ...e, path: `./${e.path}` }))])
    const reply = await uploadArchive(h, key, { name: "misnamed", archive: dotted, filename: "sources.zip", main: "sum.circom" })
    expect(reply.status, reply.text).toBe(202)
    expect(Object.keys((await stored(account, "misnamed")).files ?? {}).sort()).toEqual(["lib/mul.circom", "sum.circom"])
  })

  it("one top-level folder: kept when main names the path with it, dropped when main names it inside the folder", async () => {
    const { account, key } = await h.newAccount()
    const nested = zip(SOURCES.map((e) => ({ ...e, path: `mycircuit/${e.path}` })))
    expect((await uploadArchive(h, key, { name: "kept", archive: nested, main: "mycircuit/sum.circom" })).status).toBe(202)
    const kept = await stored(account, "kept")
    expect([kept.main, Object.keys(kept.files ?? {}).sort()]).toEqual(["mycircuit/sum.circom", ["mycircuit/lib/mul.circom", "mycircuit/sum.circom"]])
    expect((await settled(h, key, "kept")).json.status).toBe("ready")

    // GitHub's tarballs: owner-repo-<sha>/…, whose folder name nobody knows in advance.
    const github = tarGz(SOURCES.map((e) => ({ ...e, path: `acme-circuits-1a2b3c4/${e.path}` })))
    expect((await uploadArchive(h, key, { name: "stripped", archive: github, main: "sum.circom" })).status).toBe(202)
    const stripped = await stored(account, "stripped")
    expect([stripped.main, Object.keys(stripped.files ?? {}).sort()]).toEqual(["sum.circom", ["lib/mul.circom", "sum.circom"]])
    expect((await settled(h, key, "stripped")).json.status).toBe("ready")
  })

  it("without main, an archive with Nargo.toml at its root is a Noir project (409 here, a server without an UltraHonk CRS)", async () => {
    const { key } = await h.newAccount()
    const manifest: ArchiveEntry = { path: "noir/Nargo.toml", content: "[package]\nname = \"n\"\ntype = \"bin\"\n" }
    const program: ArchiveEntry = { path: "noir/src/main.nr", content: "fn main(x: Field) { assert(x != 0); }\n" }
    const reply = await uploadArchive(h, key, { name: "noir", archive: tarGz([manifest, program, { path: "noir/README.md", content: "notes" }]) })
    expectEnvelope(reply, 409, "setup_unavailable")
    expect(reply.json.error.message).toContain("Noir")
    // Checked as noir_sources are, before the setup: the core's rule names the part those would have been.
    const incomplete = await uploadArchive(h, key, { name: "noir", archive: tarGz([manifest]) })
    expectEnvelope(incomplete, 400, "invalid_request")
    expect(messages(incomplete)).toEqual(["noir_sources: a Noir upload needs src/main.nr, the program's entry point"])
  })

  it("refuses what cannot go with an archive, naming the part", async () => {
    const { key } = await h.newAccount()
    const archive = zip(SOURCES)
    const cases: Array<[string, ArchiveUpload, Array<string>]> = [
      ["sources beside it", { archive, main: "sum.circom", extra: [["sources", new Blob([MUL]), "lib/mul.circom"]] }, ["sources"]],
      ["prebuilt parts beside it", { archive, main: "sum.circom", extra: [["wasm", new Blob(["\0asm"]), "c.wasm"]] }, ["wasm"]],
      ["noir_sources beside it", { archive, extra: [["noir_sources", new Blob(["[package]"]), "Nargo.toml"]] }, ["noir_sources"]],
      ["main sent as a file", { archive, main: { file: SUM_MAIN } }, ["main"]],
      ["main as a path without an archive", { main: "sum.circom" }, ["main"]],
      ["main not in the archive", { archive, main: "circuit.circom" }, ["main"]],
      ["main leaving the archive", { archive, main: "../sum.circom" }, ["main"]],
      ["no main, and no Nargo.toml", { archive }, ["main"]],
      ["main twice", { archive, main: "sum.circom", extra: [["main", "lib/mul.circom"]] }, ["main"]]
    ]
    for (const [label, upload, paths] of cases) {
      const reply = await uploadArchive(h, key, upload)
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply), `${label}: ${reply.text}`).toEqual(paths)
    }
    const missing = await uploadArchive(h, key, { archive, main: "circuit.circom" })
    expect(messages(missing)).toEqual(['main: "circuit.circom" is not in the archive; its circom files include "sum.circom", "lib/mul.circom"'])
    expect((await h.call("GET", "/api/v1/circuits/archived", { token: key })).status).toBe(404)
  })

  it("refuses a file that is no archive, a corrupt one, and a gzip that holds no tar, naming the formats taken", async () => {
    const { key } = await h.newAccount()
    const good = zip(SOURCES)
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ["a circom file", new TextEncoder().encode(SUM_MAIN), /send a \.zip, or a gzip'd tar \(\.tar\.gz, \.tgz\)/],
      ["a plain tar", tar(SOURCES), /send a \.zip, or a gzip'd tar/],
      ["a zip cut short", good.slice(0, good.length - 30), /not a readable archive/],
      ["a zip with a flipped byte in a file", flipped(zip(SOURCES, { level: 0 }), SUM_MAIN.slice(0, 20)), /CRC-32/],
      ["a tar.gz cut short", tarGz(SOURCES).slice(0, 40), /not a readable archive: gzip/],
      ["a gzip of something else", gzip(SUM_MAIN), /not a tar archive/],
      ["a tar whose header is damaged", gzip(damagedTar()), /not a readable archive/]
    ]
    for (const [label, archive, message] of cases) {
      const reply = await uploadArchive(h, key, { archive, main: "sum.circom" })
      expectEnvelope(reply, 400, "invalid_request")
      expect(detailPaths(reply), `${label}: ${reply.text}`).toEqual(["archive"])
      expect(messages(reply)[0], label).toMatch(message)
    }
  })

  it("refuses links, devices, repeated and unacceptable paths, naming every entry at fault at once", async () => {
    const { key } = await h.newAccount()
    const tarred = tarGz([
      ...SOURCES,
      { path: "link.circom", type: "SymbolicLink" },
      { path: "hard.circom", type: "Link" },
      { path: "pipe", type: "FIFO" },
      { path: "tty", type: "CharacterDevice" },
      { path: "lib/mul.circom", content: "// again" },
      { path: "../up.circom", content: "x" },
      { path: "/etc/passwd", content: "x" }
    ])
    const reply = await uploadArchive(h, key, { archive: tarred, main: "sum.circom" })
    expectEnvelope(reply, 400, "invalid_request")
    expect(messages(reply)).toEqual([
      'archive: entry "link.circom": a symbolic link; an archive may hold only regular files and folders',
      'archive: entry "hard.circom": a hard link; an archive may hold only regular files and folders',
      'archive: entry "pipe": a device or pipe; an archive may hold only regular files and folders',
      'archive: entry "tty": a device or pipe; an archive may hold only regular files and folders',
      'archive: entry "lib/mul.circom": the path "lib/mul.circom" is in the archive more than once',
      'archive: entry "../up.circom": the path "../up.circom" has an empty, . or .. segment; give its place inside the upload',
      'archive: entry "/etc/passwd": the path "/etc/passwd" is absolute; give it relative to the upload'
    ])

    const zipped = zip([...SOURCES, { path: "link.circom", content: "sum.circom", mode: 0o120777 }, { path: "lib\\win.circom", content: "x" }, { path: "sum.circom", content: "again" }])
    const zipReply = await uploadArchive(h, key, { archive: zipped, main: "sum.circom" })
    expect(messages(zipReply)).toEqual([
      'archive: entry "link.circom": a symbolic link; an archive may hold only regular files and folders',
      'archive: entry "lib\\\\win.circom": the path "lib\\\\win.circom" uses \\; separate directories with /',
      'archive: entry "sum.circom": the path "sum.circom" is in the archive more than once'
    ])
  })

  it("holds an archive to the part limit in files (and in folders apart), and refuses one without files", async () => {
    const { key } = await h.newAccount()
    const many = (count: number) => Array.from({ length: count }, (_, i): ArchiveEntry => ({ path: `f/${i}.circom`, content: "" }))
    for (const archive of [zip([...SOURCES, ...many(999)]), tarGz([...SOURCES, ...many(999)])]) {
      const reply = await uploadArchive(h, key, { archive, main: "sum.circom" })
      expectEnvelope(reply, 400, "invalid_request")
      expect(messages(reply)).toEqual(["archive: more than 1000 files; an upload holds at most 1000"])
    }
    const folders = tarGz([...SOURCES, ...Array.from({ length: 1001 }, (_, i): ArchiveEntry => ({ path: `d${i}/`, type: "Directory" }))])
    expect(messages(await uploadArchive(h, key, { archive: folders, main: "sum.circom" }))).toEqual([
      "archive: more than 1000 folders; an upload holds at most 1000"
    ])
    const empty = await uploadArchive(h, key, { archive: tarGz([{ path: "src/", type: "Directory" }]), main: "sum.circom" })
    expect(messages(empty)).toEqual(["archive: no regular files in it"])
  })

  it("stops an archive at the upload limit while decompressing it: a gzip bomb, a zip that says so, a zip that lies", async () => {
    const LIMIT = 2 ** 20
    const small = await harnessOver(ManagedRuntime.make(coreWithBuilds(testCore(), { maxUploadBytes: LIMIT })))
    try {
      const { key } = await small.newAccount()
      const just = new Uint8Array(LIMIT - SUM_MAIN.length - MUL.length)
      expect((await uploadArchive(small, key, { name: "at_limit", archive: zip([...SOURCES, { path: "zeros.bin", content: just }]), main: "sum.circom" })).status).toBe(202)
      const over = await uploadArchive(small, key, { archive: tarGz([...SOURCES, { path: "zeros.bin", content: new Uint8Array(just.length + 1) }]), main: "sum.circom" })
      expect(messages(over)).toEqual([`archive: entry "zeros.bin": the files reach more than ${LIMIT} bytes uncompressed here; the upload limit is ${LIMIT} bytes`])

      // 900 MiB of zeros in a body within the 1 MiB limit.
      const rssBefore = process.memoryUsage().rss
      const bomb = tarGzBomb("bomb.circom", 900 * 2 ** 20)
      expect(bomb.length).toBeLessThan(LIMIT)
      const bombed = await uploadArchive(small, key, { archive: bomb, main: "bomb.circom" })
      expect(messages(bombed)).toEqual([`archive: entry "bomb.circom": the files reach more than ${LIMIT} bytes uncompressed here; the upload limit is ${LIMIT} bytes`])
      // Inflating it whole would have taken 900 MiB.
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 2 ** 20)

      const declared = zip([{ path: "sum.circom", content: new Uint8Array(4 * LIMIT) }], { level: 9 })
      expect(declared.length).toBeLessThan(LIMIT)
      expect(messages(await uploadArchive(small, key, { archive: declared, main: "sum.circom" }))).toEqual([
        `archive: entry "sum.circom": the files reach more than ${LIMIT} bytes uncompressed here; the upload limit is ${LIMIT} bytes`
      ])
      const lying = lyingZip("sum.circom", new Uint8Array(4 * LIMIT), 100)
      const lied = await uploadArchive(small, key, { archive: lying, main: "sum.circom" })
      expectEnvelope(lied, 400, "invalid_request")
      expect(messages(lied)[0]).toMatch(/^archive: not a readable archive: entry "sum.circom": too many bytes/)
    } finally {
      await small.close()
    }
  })
})

const gzip = (content: string | Uint8Array) => new Uint8Array(gzipSync(content))

/** A stored (uncompressed) zip with one byte of `marker`'s first occurrence changed: its CRC no longer matches. */
const flipped = (bytes: Uint8Array, marker: string) => {
  const copy = Buffer.from(bytes)
  const at = copy.indexOf(Buffer.from(marker))
  copy[at] = copy[at]! ^ 0x20
  return new Uint8Array(copy)
}

/** A tar whose first header has a byte of its name changed after its checksum was written. */
const damagedTar = () => {
  const bytes = Buffer.from(tar(SOURCES))
  bytes[0] = bytes[0]! ^ 0x20
  return new Uint8Array(bytes)
}
