/**
 * How the client's methods take queries and uploads. Written by hand, unlike `types.ts`: these are
 * the client's own argument shapes (numbers for `limit`, files of several kinds), not bodies on the
 * wire, and `test/endpoints.test.ts` holds the query fields to the server's definition.
 */
import type { AuditAction, EventType, ProofStatus, Timestamp } from "./types.js"

/** A list's page: `limit` 1–100 (default 20), and the id of the last item of the previous page. */
export interface PageQuery {
  readonly limit?: number
  readonly starting_after?: string
}

/** `events.list`: newest first; `starting_after` an event id moves on to older ones. */
export interface ListEventsQuery extends PageQuery {
  /** One type, or several. */
  readonly type?: EventType | readonly [EventType, ...Array<EventType>]
  /** Created at or after this time. */
  readonly created_gte?: Timestamp
  /** Created before this time. */
  readonly created_lt?: Timestamp
}

export interface ListProofsQuery extends PageQuery {
  readonly status?: ProofStatus
}

/** Newest first: `starting_after` is the last id of the previous page; the filters narrow the log. */
export interface AuditLogQuery extends PageQuery {
  readonly action?: AuditAction
  /** A key, webhook or circuit id. */
  readonly target_id?: string
  /** A key id, or a session's actor id. */
  readonly actor_id?: string
}

/** A file's bytes: a `Blob`/`File` (e.g. from `fs.openAsBlob`), bytes, or text. */
export type FileContent = Blob | Uint8Array | ArrayBuffer | string

/** A file with its name: a `File`, or content with a `filename`. */
export type NamedFile =
  | (Blob & { readonly name: string })
  | { readonly filename: string; readonly content: FileContent; readonly contentType?: string }

export type UploadFile = FileContent | NamedFile

/**
 * `circuits.create`: circom sources (`main`, plus every file it includes as `sources`, each named
 * by its path relative to `main`, e.g. `lib/util.circom`), or prebuilt artifacts (`wasm`, `zkey`,
 * `sym`, optionally `r1cs`).
 */
export interface CircuitUpload {
  /** 1–64 letters, digits, `_` or `-`: the `type` of its proofs. */
  readonly name: string
  readonly description?: string
  /** Its filename is its path in the upload; `main.circom` when it has none. */
  readonly main?: UploadFile
  readonly sources?: ReadonlyArray<NamedFile>
  readonly wasm?: UploadFile
  readonly zkey?: UploadFile
  readonly sym?: UploadFile
  readonly r1cs?: UploadFile
}
