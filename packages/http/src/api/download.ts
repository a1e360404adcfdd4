import { HttpApiSchema } from "@effect/platform"
import type { ArtifactDownload } from "@mzk/core"
import { Option, Schema, SchemaAST as AST } from "effect"

const DownloadAnnotation: unique symbol = Symbol.for("@mzk/http/Download")

const isDownload = (u: unknown): u is ArtifactDownload =>
  typeof u === "object" && u !== null && "bytes" in u && "filename" in u && "content_type" in u

/**
 * A success body that is a file, sent as it is read rather than encoded: the handler answers with
 * the core's `ArtifactDownload`, and the dispatcher serves it with its validators and ranges
 * (`serve/download.ts`). Declared as binary so the OpenAPI document says so.
 */
export const DownloadedFile: Schema.Schema<ArtifactDownload> = Schema.declare(isDownload, {
  identifier: "DownloadedFile",
  description: "The file's bytes",
  jsonSchema: { type: "string", format: "binary" },
  [DownloadAnnotation]: true,
  [HttpApiSchema.AnnotationEncoding]: { kind: "Uint8Array", contentType: "application/octet-stream" }
})

/** The AST is a `DownloadedFile`: the endpoint answers with a file. */
export const isDownloadAst = (ast: AST.AST): boolean =>
  ast._tag === "Declaration" && Option.getOrElse(AST.getAnnotation<boolean>(ast, DownloadAnnotation), () => false)

/** What the OpenAPI document says of a download's request and response headers, beside its 206 and 304. */
export const DOWNLOAD_PARAMETERS = [
  {
    name: "Range",
    in: "header",
    required: false,
    description: "One byte range (`bytes=0-1023`, `bytes=1024-`, `bytes=-1024`) to resume or split a download: 206 with " +
      "`Content-Range`; a range past the end is 416 `range_not_satisfiable`. Several ranges, or a malformed header, get the whole file",
    schema: { type: "string" }
  },
  {
    name: "If-Range",
    in: "header",
    required: false,
    description: "The `ETag` a partial download began with: the range is served only while the file is still that one, else the whole file (200)",
    schema: { type: "string" }
  },
  {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "The `ETag` of a copy already held: 304 without a body while the file is still that one",
    schema: { type: "string" }
  }
] as const

const header = (description: string, schema: Record<string, unknown> = { type: "string" }) => ({ description, schema })

export const DOWNLOAD_HEADERS = {
  ETag: header("The file's SHA-256 in lowercase hex, quoted (a strong validator): check the bytes against it"),
  "Content-Length": header("The bytes in this response (the range's, on a 206)", { type: "integer" }),
  "Accept-Ranges": header("`bytes`: a download can be resumed with `Range`"),
  "Content-Disposition": header("`attachment` with the file's name, `<name>@<version>[.<system>].<ext>`"),
  "Cache-Control": header("`private, no-cache`: a cache keeps it for this key alone and asks again (If-None-Match) before reuse")
} as const
