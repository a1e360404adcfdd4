import { Zip, ZipDeflate, ZipPassThrough } from "fflate"
import { Header } from "tar"
import { gzipSync } from "node:zlib"

/**
 * Archives made in tests, byte for byte as the tools people use make them (zip's and tar's
 * layouts), with what those tools also allow and uploads refuse: links, devices, a path twice,
 * paths that leave the archive.
 */

export type TarType = "File" | "Directory" | "SymbolicLink" | "Link" | "FIFO" | "CharacterDevice"

export interface ArchiveEntry {
  readonly path: string
  readonly content?: string | Uint8Array
  /** tar: the entry's type (default File). */
  readonly type?: TarType
  /** zip: the Unix mode, type bits included (default a regular file, 0o100644; 0o120777 a symbolic link). */
  readonly mode?: number
  /**
   * The name's bytes as stored, where they are not the UTF-8 of `path` (bytes that are not UTF-8):
   * tar, the header's name field; zip, the name, flagged UTF-8 (`path` then only says how many bytes).
   */
  readonly rawName?: Uint8Array
  /** tar: a pax extended header before the entry, with these records, their values' bytes as given (a NUL, bytes that are not UTF-8). */
  readonly pax?: Readonly<Record<string, string | Uint8Array>>
}

const bytesOf = (content: string | Uint8Array | undefined) =>
  typeof content === "string" ? new TextEncoder().encode(content) : content ?? new Uint8Array(0)

/** A header block whose name field holds `name` as given, its checksum made anew (the sum of its bytes, the checksum field as spaces). */
const withRawName = (block: Buffer, name: Uint8Array) => {
  block.fill(0, 0, 100)
  block.set(name, 0)
  block.fill(0x20, 148, 156)
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1")
  return block
}

/** A pax record, `<length> <key>=<value>\n`, its length counting its own digits. */
const paxRecord = (key: string, value: string | Uint8Array) => {
  const rest = Buffer.concat([Buffer.from(` ${key}=`), bytesOf(value), Buffer.from("\n")])
  let length = rest.length + 1
  while (String(length).length + rest.length !== length) length = String(length).length + rest.length
  return Buffer.concat([Buffer.from(String(length)), rest])
}

const padded = (body: Uint8Array) => [body, new Uint8Array((512 - (body.length % 512)) % 512)]

/** A tar's blocks (ustar headers, content padded to 512 bytes, two zero blocks at the end), not compressed. */
export const tar = (entries: ReadonlyArray<ArchiveEntry>): Uint8Array => {
  const blocks: Array<Uint8Array> = []
  for (const entry of entries) {
    if (entry.pax !== undefined) {
      const records = Buffer.concat(Object.entries(entry.pax).map(([key, value]) => paxRecord(key, value)))
      const block = Buffer.alloc(512)
      new Header({ path: "PaxHeader/entry", type: "ExtendedHeader", size: records.length, mode: 0o644, mtime: new Date(0) }).encode(block, 0)
      blocks.push(block, ...padded(records))
    }
    const type = entry.type ?? "File"
    const body = type === "File" ? bytesOf(entry.content) : new Uint8Array(0)
    const header = new Header({
      path: entry.path,
      type,
      size: body.length,
      mode: type === "Directory" ? 0o755 : 0o644,
      mtime: new Date(0),
      ...(type === "SymbolicLink" || type === "Link" ? { linkpath: "main.circom" } : {})
    })
    const block = Buffer.alloc(512)
    header.encode(block, 0)
    blocks.push(entry.rawName === undefined ? block : withRawName(block, entry.rawName), ...padded(body))
  }
  blocks.push(new Uint8Array(1024))
  return Buffer.concat(blocks)
}

/** `tar czf`: the tar, gzip'd. */
export const tarGz = (entries: ReadonlyArray<ArchiveEntry>): Uint8Array => gzipSync(tar(entries))

/** A zip as Info-ZIP's `zip -r` makes one on Unix: deflated, each entry's Unix mode in its external attributes. */
export const zip = (entries: ReadonlyArray<ArchiveEntry>, options: { readonly level?: 0 | 9 } = {}): Uint8Array => {
  const chunks: Array<Uint8Array> = []
  const archive = new Zip((error, chunk) => {
    if (error) throw error
    chunks.push(chunk)
  })
  // A raw name is written as a placeholder of as many bytes, not ASCII (so the entry is flagged UTF-8), then put in its place.
  const raw: Array<readonly [Buffer, Buffer]> = []
  for (const [i, entry] of entries.entries()) {
    let name = entry.path
    if (entry.rawName !== undefined) {
      name = `é${String(i).padStart(entry.rawName.length - 2, "#")}`
      raw.push([Buffer.from(name), Buffer.from(entry.rawName)])
    }
    const file = options.level === 0 ? new ZipPassThrough(name) : new ZipDeflate(name, { level: options.level ?? 6 })
    file.os = 3
    file.attrs = ((entry.mode ?? 0o100644) << 16) >>> 0
    archive.add(file)
    file.push(bytesOf(entry.content), true)
  }
  archive.end()
  const bytes = Buffer.concat(chunks)
  // In the local header and in the central directory alike.
  for (const [placeholder, name] of raw) {
    for (let at = bytes.indexOf(placeholder); at !== -1; at = bytes.indexOf(placeholder, at + 1)) name.copy(bytes, at)
  }
  return bytes
}

/**
 * A gzip'd tar of one file of `size` zero bytes, made from one compressed megabyte repeated as
 * further gzip members (which gunzip reads as one stream): a bomb of gigabytes in a few megabytes,
 * made without holding it.
 */
export const tarGzBomb = (path: string, size: number): Uint8Array => {
  const MiB = 2 ** 20
  const header = Buffer.alloc(512)
  new Header({ path, type: "File", size, mode: 0o644, mtime: new Date(0) }).encode(header, 0)
  const zeros = gzipSync(new Uint8Array(MiB), { level: 9 })
  return Buffer.concat([gzipSync(header), ...Array.from({ length: Math.ceil(size / MiB) }, () => zeros)])
}

/**
 * A zip whose entry claims `claimed` bytes uncompressed but inflates to its content's real size
 * (the sizes in its local and central headers rewritten): a bomb that lies about itself.
 */
export const lyingZip = (path: string, content: Uint8Array, claimed: number): Uint8Array => {
  const bytes = Buffer.from(zip([{ path, content }], { level: 9 }))
  const local = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04]))
  const central = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]))
  bytes.writeUInt32LE(claimed, local + 22)
  bytes.writeUInt32LE(claimed, central + 24)
  return bytes
}
