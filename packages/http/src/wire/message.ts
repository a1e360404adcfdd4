import type { Effect, Stream } from "effect"

/** A request as the dispatcher sees it, whatever server it came from. */
export interface MzkRequest {
  readonly method: string
  /** The path and query, e.g. `/api/v1/proofs?limit=5`. */
  readonly url: string
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The whole body as text, read on demand, refused past `MAX_BODY_BYTES`. */
  readonly body: Effect.Effect<string, BodyError>
  /**
   * The body as it arrives, each chunk handed to `sink` (for good: the transport does not reuse
   * it), refused once more than `limitBytes` have arrived: an upload, parsed as it streams and
   * never buffered past its endpoint's limit. Read at most once, and only if `body` is not. When
   * `sink` returns a promise, no more is read until it settles (a staged upload part waits for storage).
   */
  readonly stream: (limitBytes: number, sink: (chunk: Uint8Array) => void | Promise<void>) => Effect.Effect<void, BodyError>
  /** The connection's peer address, where the transport knows it (Node's socket; not a fetch handler). */
  readonly remoteAddress?: string | undefined
}

export type BodyError = { readonly _tag: "BodyTooLarge" } | { readonly _tag: "BodyUnreadable" }

/**
 * A body sent as it is read (a file of any size, never held whole): `length` bytes, which the
 * transport announces as `Content-Length` and pulls from `stream` as the client takes them.
 */
export interface StreamedBody {
  readonly _tag: "StreamedBody"
  readonly length: number
  readonly stream: Stream.Stream<Uint8Array, unknown>
}

export const isStreamedBody = (body: MzkResponse["body"]): body is StreamedBody =>
  typeof body === "object" && !(body instanceof Uint8Array) && body._tag === "StreamedBody"

/**
 * A response as the dispatcher answers; `body` undefined sends none (204, 304), bytes are sent as
 * they are (a compressed static response), a `StreamedBody` as it is read (a download).
 */
export interface MzkResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | Uint8Array | StreamedBody | undefined
}

export const JSON_HEADERS = { "content-type": "application/json" } as const
export const TEXT_HEADERS = { "content-type": "text/plain; charset=utf-8" } as const

export const header = (request: Pick<MzkRequest, "headers">, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : value?.[0]
}
