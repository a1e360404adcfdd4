import { type ErrorDetail, InvalidRequest, uploadPathConflicts, uploadPathProblem } from "@mzk/core"
import { Effect } from "effect"
import { isUtf8 } from "node:buffer"
import type { Readable } from "node:stream"
import { crc32, createGunzip } from "node:zlib"
import { Parser as TarParser, type ReadEntry } from "tar"
import yauzl from "yauzl"

/**
 * Circuit sources uploaded as one archive (Sindri's way): a `.zip` or a gzip'd tar, told apart by
 * their first bytes, whatever the file is called. Its regular files become the same `files` map a
 * multipart upload of one part per file makes, under the same rules, so everything after this
 * module (path rules, storage, the build) is shared.
 */

/** The most parts an upload may have (its form's limit), and so the most files an archive may hold. */
export const MAX_UPLOAD_FILES = 1000

/** What an archive may hold: the limits of the upload it replaces. */
export interface ArchiveLimits {
  /** The most its files may hold together, uncompressed: the upload size limit. */
  readonly maxBytes: number
  /** The most files it may hold (the form's part limit); folders are counted apart, to the same limit. */
  readonly maxFiles: number
}

export type ArchiveFormat = "zip" | "tar.gz"

/** An archive's regular files by path (`/`-separated, a leading `./` dropped); its folders are not kept. */
export interface ArchiveFiles {
  readonly format: ArchiveFormat
  readonly files: Readonly<Record<string, Uint8Array>>
}

/** The accepted formats, as refusals name them. */
export const ARCHIVE_FORMATS = "a .zip, or a gzip'd tar (.tar.gz, .tgz)"

const PART = "archive"

const refusal = (message: string, details: ReadonlyArray<ErrorDetail>) => new InvalidRequest({ message, details })
const entryDetail = (entry: string, message: string): ErrorDetail => ({ path: PART, message: `entry ${JSON.stringify(entry)}: ${message}` })
const corrupt = (message: string) => refusal("The archive is corrupt", [{ path: PART, message: `not a readable archive: ${message}` }])

const OVER_LIMIT = "The archive's files are over the upload limit once uncompressed"
const overLimit = (entry: string, limits: ArchiveLimits) =>
  refusal(OVER_LIMIT, [
    entryDetail(entry, `the files reach more than ${limits.maxBytes} bytes uncompressed here; the upload limit is ${limits.maxBytes} bytes`)
  ])

/** Reading stops at once: the archive is corrupt, or passes a limit. */
class Stop extends Error {
  constructor(readonly refused: InvalidRequest) {
    super(refused.message)
  }
}

type EntryKind = "file" | "folder" | "symbolic link" | "hard link" | "device or pipe" | "unsupported entry"

const ZIP = [0x50, 0x4b] // "PK": a local file header, or the end record of an empty archive
const GZIP = [0x1f, 0x8b]
const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>) => magic.every((byte, i) => bytes[i] === byte)

/**
 * What the archive's entries come to, checked as they are read: a file's bytes are kept only when
 * its entry is acceptable, and the uncompressed total is counted chunk by chunk as it is
 * decompressed, so an archive that expands past the limit (a zip bomb) is stopped there, never
 * held whole.
 */
const makeCollector = (limits: ArchiveLimits) => {
  const files: Record<string, Uint8Array> = Object.create(null)
  const problems: Array<ErrorDetail> = []
  let total = 0
  let fileCount = 0
  let folderCount = 0
  return {
    files,
    problems,
    /**
     * Whether the entry's bytes are wanted: a regular file under an acceptable, new path, whose
     * name was read as the archive holds it (`nameProblem` says why not, naming it as it was read).
     */
    admit: (raw: string, kind: EntryKind, nameProblem?: string): string | undefined => {
      // `tar czf x.tgz .` writes every path as ./path: the same file, so the prefix is dropped.
      const path = raw.replace(/^(?:\.\/)+/, "")
      if (kind === "folder") {
        if (++folderCount > limits.maxFiles) {
          throw new Stop(refusal("The archive holds too many folders", [
            { path: PART, message: `more than ${limits.maxFiles} folders; an upload holds at most ${limits.maxFiles}` }
          ]))
        }
        return undefined
      }
      if (++fileCount > limits.maxFiles) {
        throw new Stop(refusal("The archive holds too many files", [
          { path: PART, message: `more than ${limits.maxFiles} files; an upload holds at most ${limits.maxFiles}` }
        ]))
      }
      if (kind !== "file") {
        problems.push(entryDetail(raw, `a ${kind}; an archive may hold only regular files and folders`))
        return undefined
      }
      const problem = nameProblem ?? uploadPathProblem(path)
      if (problem !== undefined) {
        problems.push(entryDetail(raw, problem))
        return undefined
      }
      if (Object.hasOwn(files, path)) {
        problems.push(entryDetail(raw, `the path ${JSON.stringify(path)} is in the archive more than once`))
        return undefined
      }
      return path
    },
    /** Refuses an entry whose declared size would take the files past the limit, before any of it is read. */
    expect: (entry: string, bytes: number) => {
      if (total + bytes > limits.maxBytes) throw new Stop(overLimit(entry, limits))
    },
    /** Counts a chunk of an entry's content against the uncompressed limit, before it is kept. */
    count: (entry: string, bytes: number) => {
      total += bytes
      if (total > limits.maxBytes) throw new Stop(overLimit(entry, limits))
    },
    keep: (path: string, chunks: ReadonlyArray<Buffer>) => {
      files[path] = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
    }
  }
}
type Collector = ReturnType<typeof makeCollector>

/** An entry's content, counted as it streams; the stream is destroyed at the first chunk past the limit. */
const readCounted = (stream: Readable, entry: string, collect: Collector) =>
  new Promise<Array<Buffer>>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => {
      try {
        collect.count(entry, chunk.length)
        chunks.push(chunk)
      } catch (stop) {
        stream.destroy()
        reject(stop)
      }
    })
    stream.on("error", (error) => reject(new Stop(corrupt(`entry ${JSON.stringify(entry)}: ${error.message}`))))
    stream.on("end", () => resolve(chunks))
  })

// Unix file types in the high half of a zip entry's external attributes (where the zip was made on Unix).
const S_IFMT = 0o170000
const UNIX_KINDS: ReadonlyMap<number, EntryKind> = new Map([
  [0o100000, "file"],
  [0o040000, "folder"],
  [0o120000, "symbolic link"],
  [0o020000, "device or pipe"],
  [0o060000, "device or pipe"],
  [0o010000, "device or pipe"],
  [0o140000, "device or pipe"]
])
/** Hosts whose zips keep a Unix mode there (APPNOTE 4.4.2.2): Unix, and OS X (Darwin). */
const UNIX_HOSTS: ReadonlySet<number> = new Set([3, 19])
const DOS_DIRECTORY = 0x10

/**
 * A name is refused rather than kept changed: yauzl and node-tar read bytes that are not UTF-8
 * where UTF-8 is declared as U+FFFD, so the file would be stored under another name than the
 * archive's, and an include naming it would not find it.
 */
const NOT_UTF8 = "its name is not valid UTF-8"

const UNICODE_PATH_FIELD = 0x7075

/**
 * Why a zip entry's name cannot be read as it is, or undefined: the bytes it declares UTF-8 (the
 * Info-ZIP Unicode Path field, where yauzl reads the name from it: version 1, the CRC-32 of the
 * name; else the name itself, flagged UTF-8) are not.
 */
const zipNameProblem = (entry: yauzl.Entry): string | undefined => {
  const unicode = entry.extraFields.find((field) =>
    field.id === UNICODE_PATH_FIELD && field.data.length >= 6 && field.data[0] === 1 && field.data.readUInt32LE(1) === crc32(entry.fileNameRaw)
  )
  const declared = unicode?.data.subarray(5) ?? ((entry.generalPurposeBitFlag & 0x800) !== 0 ? entry.fileNameRaw : undefined)
  return declared !== undefined && !isUtf8(declared) ? NOT_UTF8 : undefined
}

const zipKind = (entry: yauzl.Entry, name: string): EntryKind => {
  const mode = (entry.externalFileAttributes >>> 16) & S_IFMT
  if (UNIX_HOSTS.has(entry.versionMadeBy >>> 8) && mode !== 0) return UNIX_KINDS.get(mode) ?? "unsupported entry"
  return name.endsWith("/") || (entry.externalFileAttributes & DOS_DIRECTORY) !== 0 ? "folder" : "file"
}

/**
 * yauzl reads the central directory, which alone holds an entry's Unix type (a symbolic link is
 * otherwise a small file holding its target), checks that each entry inflates to the size it
 * declares, and refuses what does not parse. The CRC of each file is checked here.
 */
const readZip = async (bytes: Uint8Array, limits: ArchiveLimits, collect: Collector) => {
  let zip: yauzl.ZipFile
  try {
    zip = await yauzl.fromBufferPromise(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      lazyEntries: true,
      // Names are decoded below, without yauzl's own path check: the upload's rules apply, and say why.
      decodeStrings: false,
      validateEntrySizes: true,
      autoClose: false
    })
  } catch (error) {
    throw new Stop(corrupt(error instanceof Error ? error.message : String(error)))
  }
  try {
    // Files and folders are each within maxFiles: a central directory that lists more is refused unread.
    if (zip.entryCount > 2 * limits.maxFiles) {
      throw new Stop(refusal("The archive holds too many files", [
        { path: PART, message: `${zip.entryCount} entries; an upload holds at most ${limits.maxFiles} files` }
      ]))
    }
    const entries = zip.eachEntry()
    for (;;) {
      let next: IteratorResult<yauzl.Entry>
      try {
        next = await entries.next()
      } catch (error) {
        throw new Stop(corrupt(error instanceof Error ? error.message : String(error)))
      }
      if (next.done === true) break
      const entry = next.value
      // Names are UTF-8 where the entry says so (or has the Info-ZIP Unicode path field), else CP437;
      // a backslash stays one, so the path rules refuse it as they refuse it in a part's filename.
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true)
      const path = collect.admit(name, zipKind(entry, name), zipNameProblem(entry))
      if (path === undefined) continue
      if (entry.isEncrypted()) {
        collect.problems.push(entryDetail(name, "encrypted; send it unencrypted"))
        continue
      }
      // Its declared size is checked before anything is inflated (and yauzl holds the entry to it).
      collect.expect(name, entry.uncompressedSize)
      let stream: Readable
      try {
        stream = await zip.openReadStreamPromise(entry)
      } catch (error) {
        throw new Stop(corrupt(`entry ${JSON.stringify(name)}: ${error instanceof Error ? error.message : String(error)}`))
      }
      const chunks = await readCounted(stream, name, collect)
      let crc = 0
      for (const chunk of chunks) crc = crc32(chunk, crc)
      if (crc !== entry.crc32) throw new Stop(corrupt(`entry ${JSON.stringify(name)}: its CRC-32 does not match its content`))
      collect.keep(path, chunks)
    }
  } finally {
    zip.close()
  }
}

const TAR_KINDS: Partial<Record<ReadEntry["type"], EntryKind>> = {
  File: "file",
  OldFile: "file",
  ContiguousFile: "file",
  Directory: "folder",
  GNUDumpDir: "folder",
  SymbolicLink: "symbolic link",
  Link: "hard link",
  CharacterDevice: "device or pipe",
  BlockDevice: "device or pipe",
  FIFO: "device or pipe"
}

/**
 * The name a pax record (`<length> path=<name>`) or a GNU long-name record (the name, then NULs)
 * gives the next entry, where node-tar would not read it as it is: one holding a NUL it cuts there
 * (`lib/a\0b.circom` would be stored as `lib/a`), and a pax record whose bytes are not UTF-8 it
 * drops (their length no longer adds up once read with U+FFFD), taking the header's name instead.
 * That whole name goes to the upload's rules, which refuse it; otherwise undefined.
 */
const unreadName = (meta: string): string | undefined => {
  const name = /^\d+ [^=\n]+=/.test(meta) ? /(?:^|\n)\d+ path=([^\n]*)/.exec(meta)?.[1] : meta.replace(/\0+$/, "")
  return name !== undefined && /[\0\ufffd]/.test(name) ? name : undefined
}

/** A tar's headers, long-name and pax records and padding, beyond its files' bytes: at most this much per entry. */
const TAR_FRAMING_PER_ENTRY = 4096
/** A pax record (long names, times) larger than this is no source tree's. */
const TAR_MAX_META_BYTES = 64 * 1024

/**
 * Node's gunzip, its output counted as it streams, into node-tar's parser (npm's own, strict: a
 * header whose checksum fails, or an archive cut short, is an error). Both the files' bytes and
 * the whole tar stream are bounded while decompressing: the files by the upload limit, the stream
 * by that plus the framing its entries may need, so not even empty blocks can expand unbounded.
 */
const readTarGz = (bytes: Uint8Array, limits: ArchiveLimits, collect: Collector) =>
  new Promise<void>((resolve, reject) => {
    const maxStream = limits.maxBytes + (2 * limits.maxFiles + 2) * TAR_FRAMING_PER_ENTRY
    let streamed = 0
    let failed = false
    const gunzip = createGunzip()
    const fail = (error: unknown) => {
      if (failed) return
      failed = true
      gunzip.destroy()
      parser.abort(new Error("stopped"))
      reject(error instanceof Stop ? error : new Stop(corrupt(error instanceof Error ? error.message : String(error))))
    }
    const reading: Array<Promise<void>> = []
    // The next entry's whole name, where node-tar would not read its pax or long-name record as it is (`unreadName`).
    let wholeName: string | undefined
    const parser = new TarParser({
      strict: true,
      // The input is the tar itself: no second decompression by sniffing.
      brotli: false,
      zstd: false,
      maxMetaEntrySize: TAR_MAX_META_BYTES,
      onReadEntry: (entry) => {
        const name = wholeName ?? entry.path
        wholeName = undefined
        if (failed) return void entry.resume()
        let path: string | undefined
        try {
          // node-tar reads names as UTF-8, with U+FFFD for bytes that are not: such a name is not the archive's.
          path = collect.admit(name, TAR_KINDS[entry.type] ?? "unsupported entry", name.includes("\ufffd") ? NOT_UTF8 : undefined)
        } catch (stop) {
          entry.resume()
          return fail(stop)
        }
        if (path === undefined) return void entry.resume()
        const kept = path
        const chunks: Array<Buffer> = []
        reading.push(new Promise<void>((done) => {
          entry.on("data", (chunk: Buffer) => {
            if (failed) return
            try {
              collect.count(entry.path, chunk.length)
              chunks.push(chunk)
            } catch (stop) {
              fail(stop)
            }
          })
          entry.on("end", () => {
            if (!failed) collect.keep(kept, chunks)
            done()
          })
        }))
      }
    })
    // Emitted before the entry the record describes, in the order of the archive.
    parser.on("meta", (meta: string) => {
      wholeName = unreadName(meta)
    })
    parser.on("ignoredEntry", (entry: ReadEntry) => {
      if (entry.meta) fail(new Stop(corrupt(`a pax or long-name record of ${entry.size} bytes (at most ${TAR_MAX_META_BYTES})`)))
    })
    parser.on("error", (error: Error) => fail(new Stop(corrupt(tarMessage(error)))))
    parser.on("end", () => {
      if (!failed) void Promise.all(reading).then(() => (failed ? undefined : resolve()))
    })
    gunzip.on("data", (chunk: Buffer) => {
      if (failed) return
      streamed += chunk.length
      if (streamed > maxStream) {
        return fail(new Stop(refusal(OVER_LIMIT, [
          { path: PART, message: `it holds more than ${limits.maxBytes} bytes uncompressed; the upload limit is ${limits.maxBytes} bytes` }
        ])))
      }
      parser.write(chunk)
    })
    gunzip.on("error", (error) => fail(new Stop(corrupt(`gzip: ${error.message}`))))
    gunzip.on("end", () => {
      if (!failed) parser.end()
    })
    gunzip.end(bytes)
  })

/** node-tar's codes are for its own users; what a corrupt tar is, in the words of this API. */
const tarMessage = (error: Error) => {
  const code = (error as { tarCode?: string }).tarCode
  if (code === "TAR_BAD_ARCHIVE" && /Unrecognized/.test(error.message)) return "the gzip'd content is not a tar archive"
  return error.message.replace(/^TAR_[A-Z_]+: /, "")
}

/**
 * The regular files of an uploaded archive, or 400 `invalid_request` naming `archive` (and each
 * entry at fault): not a zip or a gzip'd tar, corrupt, more files or folders than `maxFiles`, more
 * than `maxBytes` uncompressed (stopped while decompressing), or entries that are links, devices,
 * duplicates, names that cannot be read as the archive holds them (not UTF-8 where it is declared,
 * a NUL), paths the upload's rules refuse, or a path inside another that is a file (all of these
 * named at once). Folders are skipped.
 */
export const readArchive = (bytes: Uint8Array, limits: ArchiveLimits): Effect.Effect<ArchiveFiles, InvalidRequest> =>
  Effect.suspend(() => {
    const format: ArchiveFormat | undefined = startsWith(bytes, ZIP) ? "zip" : startsWith(bytes, GZIP) ? "tar.gz" : undefined
    if (format === undefined) {
      return Effect.fail(refusal("The archive is neither a zip nor a gzip'd tar", [
        { path: PART, message: `not an archive this API reads: send ${ARCHIVE_FORMATS}` }
      ]))
    }
    const collect = makeCollector(limits)
    return Effect.tryPromise({
      try: () => (format === "zip" ? readZip(bytes, limits, collect) : readTarGz(bytes, limits, collect)),
      catch: (error) => (error instanceof Stop ? error.refused : corrupt(error instanceof Error ? error.message : String(error)))
    }).pipe(Effect.flatMap(() => {
      // The upload's rule between paths (the core checks it again, for every way in), named by entry here.
      for (const { path, message } of uploadPathConflicts(Object.keys(collect.files))) collect.problems.push(entryDetail(path, message))
      if (collect.problems.length > 0) return Effect.fail(refusal("The archive holds entries an upload cannot", collect.problems))
      if (Object.keys(collect.files).length === 0) {
        return Effect.fail(refusal("The archive holds no files", [{ path: PART, message: "no regular files in it" }]))
      }
      return Effect.succeed({ format, files: collect.files })
    }))
  })

/** What an archive uploads: circom sources with the main file's path, or a Noir project. */
export type ArchiveSource =
  | { readonly kind: "circom"; readonly main: string; readonly files: Readonly<Record<string, Uint8Array>> }
  | { readonly kind: "noir"; readonly files: Readonly<Record<string, Uint8Array>> }

/** The one folder every file lies in (`mycircuit/`, GitHub's `owner-repo-sha/`), or undefined. */
const soleFolder = (paths: ReadonlyArray<string>): string | undefined => {
  const first = paths[0]?.split("/")[0]
  return first !== undefined && paths.every((path) => path.startsWith(`${first}/`)) ? `${first}/` : undefined
}

const withoutFolder = (files: Readonly<Record<string, Uint8Array>>, folder: string) => {
  const out: Record<string, Uint8Array> = Object.create(null)
  for (const [path, bytes] of Object.entries(files)) out[path.slice(folder.length)] = bytes
  return out
}

const NOIR_MANIFEST = "Nargo.toml"

/**
 * An archive's files as an upload: with `main`, circom sources whose main file is at that path;
 * without, a Noir project (its `Nargo.toml` and the `.nr` files under `src/`, what nargo
 * compiles). Paths are the archive's own, except that an archive whose files all lie in one
 * top-level folder (`tar czf c.tgz mycircuit/`, GitHub's tarballs) may name `main` (or hold its
 * `Nargo.toml`) inside that folder: then the folder is dropped from every path, as if the archive
 * had been made inside it. A path found as given is never reinterpreted.
 */
export const archiveSource = (archive: ArchiveFiles, main: string | undefined): Effect.Effect<ArchiveSource, InvalidRequest> => {
  const paths = Object.keys(archive.files)
  const folder = soleFolder(paths)
  const locate = (path: string) =>
    Object.hasOwn(archive.files, path)
      ? archive.files
      : folder !== undefined && Object.hasOwn(archive.files, folder + path)
      ? withoutFolder(archive.files, folder)
      : undefined
  if (main !== undefined) {
    const problem = uploadPathProblem(main)
    if (problem !== undefined) return Effect.fail(refusal("main must name a file in the archive", [{ path: "main", message: problem }]))
    const files = locate(main)
    if (files === undefined) {
      const circom = paths.filter((path) => path.endsWith(".circom")).slice(0, 5)
      return Effect.fail(refusal("main must name a file in the archive", [{
        path: "main",
        message: `${JSON.stringify(main)} is not in the archive` +
          (circom.length > 0 ? `; its circom files include ${circom.map((path) => JSON.stringify(path)).join(", ")}` : "")
      }]))
    }
    return Effect.succeed({ kind: "circom", main, files })
  }
  const project = locate(NOIR_MANIFEST)
  if (project === undefined) {
    return Effect.fail(refusal("The archive's main file is not named", [{
      path: "main",
      message: "missing: the path of the main circom file inside the archive, as a form field (or, for a Noir project, " +
        "an archive with Nargo.toml at its root)"
    }]))
  }
  const files: Record<string, Uint8Array> = Object.create(null)
  for (const [path, bytes] of Object.entries(project)) {
    if (path === NOIR_MANIFEST || (path.startsWith("src/") && path.endsWith(".nr"))) files[path] = bytes
  }
  return Effect.succeed({ kind: "noir", files })
}
