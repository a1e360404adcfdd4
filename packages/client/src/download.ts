import type { ProvingSystem } from "./types.js"

/** A circuit's files, as `GET /circuits/{name}/artifacts/{kind}` names them. */
export type ArtifactKind = "wasm" | "zkey" | "verification_key" | "r1cs" | "sym" | "noir_program"

export interface ArtifactOptions {
  /** `zkey` and `verification_key`: the system whose key to fetch (default: the circuit's own). */
  readonly proving_system?: ProvingSystem
  /**
   * Resume a broken download: the bytes from this offset on (`Range: bytes=<offset>-`). With
   * `ifRange`, only while the file is still the one the first part came from; otherwise the whole
   * file comes back (`offset` 0 in the result), so check it before appending.
   */
  readonly offset?: number
  /** The `etag` the first part of a resumed download came with (`If-Range`). */
  readonly ifRange?: string
  /** The `etag` of a copy you hold (`If-None-Match`): resolves with `notModified` and no bytes while it is current. */
  readonly ifNoneMatch?: string
  /** Cancels the download, the body's reading included. */
  readonly signal?: AbortSignal
}

/**
 * A download under way: what the server said of the file, and its bytes as a stream (`body`,
 * read it once) or all at once (`bytes()`, for files that fit in memory). A zkey can be gigabytes:
 * stream it to a file rather than holding it.
 */
export interface ArtifactDownload {
  /** True when `ifNoneMatch` named the current file: `body` is empty. */
  readonly notModified: boolean
  /** The file's SHA-256, lowercase hex: the ETag, unquoted. Pass it as `ifRange` or `ifNoneMatch`. */
  readonly etag: string
  /** The whole file's size in bytes (undefined on `notModified`). */
  readonly size: number | undefined
  /** Where `body` starts in the file: 0, or `offset` when the range was served. */
  readonly offset: number
  /** How many bytes `body` holds. */
  readonly length: number
  readonly contentType: string
  /** The name the server gives the file: `<name>@<version>[.<system>].<ext>`. */
  readonly filename: string | undefined
  readonly body: ReadableStream<Uint8Array>
  /** Reads `body` whole. */
  readonly bytes: () => Promise<Uint8Array>
}

const unquoted = (etag: string | null) => (etag ?? "").replace(/^W\//, "").replace(/^"|"$/g, "")
const quoted = (etag: string) => (etag.startsWith("\"") ? etag : `"${etag}"`)

/** The request headers of an artifact download. */
export const downloadHeaders = (options: ArtifactOptions): Record<string, string> => {
  const headers: Record<string, string> = {}
  if (options.offset !== undefined && options.offset > 0) {
    if (!Number.isSafeInteger(options.offset)) throw new TypeError("offset must be a whole number of bytes")
    headers.range = `bytes=${options.offset}-`
    if (options.ifRange !== undefined) headers["if-range"] = quoted(options.ifRange)
  }
  if (options.ifNoneMatch !== undefined) headers["if-none-match"] = quoted(options.ifNoneMatch)
  return headers
}

/** A 200, 206 or 304 answer as an `ArtifactDownload`. */
export const artifactDownloadOf = (response: Response): ArtifactDownload => {
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get("content-range") ?? "")
  const length = Number(response.headers.get("content-length") ?? "0")
  const body = response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })
  const disposition = /filename="([^"]*)"/.exec(response.headers.get("content-disposition") ?? "")
  return {
    notModified: response.status === 304,
    etag: unquoted(response.headers.get("etag")),
    size: response.status === 304 ? undefined : range !== null ? Number(range[3]) : length,
    offset: response.status === 206 && range !== null ? Number(range[1]) : 0,
    length: response.status === 304 ? 0 : length,
    contentType: response.headers.get("content-type") ?? "application/octet-stream",
    filename: disposition?.[1],
    body,
    bytes: async () => new Uint8Array(await new Response(body).arrayBuffer())
  }
}
