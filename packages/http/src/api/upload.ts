import type { StagedArtifact } from "@mzk/core"
import { Option, Schema, SchemaAST as AST } from "effect"
import type { FormFile, StagedFormFile } from "../wire/multipart.js"

const UploadedFileAnnotation: unique symbol = Symbol.for("@mzk/http/UploadedFile")
const StagedFileAnnotation: unique symbol = Symbol.for("@mzk/http/StagedFile")

const isFormFile = (u: unknown): u is FormFile =>
  typeof u === "object" && u !== null && "bytes" in u && u.bytes instanceof Uint8Array && "contentType" in u

const isStaged = (u: unknown): u is StagedArtifact =>
  typeof u === "object" && u !== null && "staging" in u && typeof u.staging === "string" && "digest" in u && "size" in u

const isStagedFormFile = (u: unknown): u is StagedFormFile =>
  typeof u === "object" && u !== null && "staged" in u && isStaged(u.staged) && "contentType" in u

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

/**
 * A file part written to artifact storage as it arrives (`Circuits.stageUpload`), for parts that
 * may be far larger than what a process should hold (a 2^20 zkey is 0.5–0.7 GB): the handler gets
 * the staged artifact, which `Circuits.create` publishes, or the request's end drops.
 */
export const StagedFile: Schema.Schema<StagedFormFile> = Schema.declare(isStagedFormFile, {
  identifier: "StagedFile",
  description: "A file part",
  jsonSchema: { type: "string", format: "binary" },
  [StagedFileAnnotation]: true
})
export type StagedFile = StagedFormFile

const annotated = (ast: AST.AST, annotation: symbol) =>
  ast._tag === "Declaration" && Option.getOrElse(AST.getAnnotation<boolean>(ast, annotation), () => false)

/** The AST is an `UploadedFile` (as its own schema or annotated). */
export const isUploadedFileAst = (ast: AST.AST): boolean => annotated(ast, UploadedFileAnnotation)

/** The AST is a `StagedFile` (as its own schema or annotated). */
export const isStagedFileAst = (ast: AST.AST): boolean => annotated(ast, StagedFileAnnotation)
