/**
 * The files `circuits.create` takes, in the forms a caller has them. Written by hand, unlike
 * `types.ts`: on the wire a file is a multipart part, and these are the client's ways to make one.
 */

/** A file's bytes: a `Blob`/`File` (e.g. from `fs.openAsBlob`), bytes, or text. */
export type FileContent = Blob | Uint8Array | ArrayBuffer | string

/** A file with its name: a `File`, or content with a `filename`. */
export type NamedFile =
  | (Blob & { readonly name: string })
  | { readonly filename: string; readonly content: FileContent; readonly contentType?: string }

export type UploadFile = FileContent | NamedFile
