import { Option, Schema, SchemaAST as AST } from "effect"
import type { FormFile } from "../wire/multipart.js"

const UploadedFileAnnotation: unique symbol = Symbol.for("@mzk/http/UploadedFile")

const isFormFile = (u: unknown): u is FormFile =>
  typeof u === "object" && u !== null && "bytes" in u && u.bytes instanceof Uint8Array && "contentType" in u

/**
 * A file part of a `multipart/form-data` body, held in memory (its endpoint's upload limit bounds
 * it). The dispatcher serves multipart payloads whose files are declared with this, not the
 * platform's `PersistedFile`, which HttpApiBuilder writes to disk first.
 */
export const UploadedFile: Schema.Schema<FormFile> = Schema.declare(isFormFile, {
  identifier: "UploadedFile",
  description: "A file part",
  jsonSchema: { type: "string", format: "binary" },
  [UploadedFileAnnotation]: true
})
export type UploadedFile = FormFile

/** The AST is an `UploadedFile` (as its own schema or annotated). */
export const isUploadedFileAst = (ast: AST.AST): boolean =>
  ast._tag === "Declaration" && Option.getOrElse(AST.getAnnotation<boolean>(ast, UploadedFileAnnotation), () => false)

