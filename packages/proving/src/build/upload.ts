import { posix } from "node:path"
import { circomlibHas } from "./circomlib.js"

/** Why an upload was refused before circom ran; mapped to a BuildFailure by the compiler. */
export interface UploadProblem {
  readonly code: "include_outside_upload" | "compile_error"
  readonly message: string
  readonly file?: string
  readonly line?: number
}

/**
 * An upload path as it will sit in the build directory, or null when it would leave it: absolute
 * paths, `..` segments, drive letters and backslashes (a Windows client's `..\x`) are refused.
 */
export const normaliseUploadPath = (raw: string): string | null => {
  if (raw === "" || raw.includes("\0") || raw.includes("\\") || raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) return null
  const segments = raw.split("/").filter((s) => s !== "" && s !== ".")
  if (segments.length === 0 || segments.includes("..")) return null
  return segments.join("/")
}

/**
 * The source with comments blanked out (newlines kept, so line numbers stay right), exactly as
 * circom's preprocessor does it: `//` and `/*` start a comment even inside a string, so quotes are
 * not looked at here either: skipping quoted text, which circom does not, would let
 * `include "A/*"; // *\/"; include "../x"` hide its second include from this check.
 */
const withoutComments = (source: string): string => {
  let out = ""
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    const next = source[i + 1]
    if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") {
        out += " "
        i++
      }
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2)
      const stop = end === -1 ? source.length : end + 2
      out += source.slice(i, stop).replace(/[^\n]/g, " ")
      i = stop
    } else {
      out += c
      i++
    }
  }
  return out
}

/** Every `include "…"` of one file with its line. */
export const includesOf = (source: string): ReadonlyArray<{ readonly target: string; readonly line: number }> => {
  const text = withoutComments(source)
  const found: Array<{ target: string; line: number }> = []
  for (const match of text.matchAll(/\binclude\s*"([^"]*)"/g)) {
    const line = text.slice(0, match.index).split("\n").length
    found.push({ target: match[1]!, line })
  }
  return found
}

/** The upload as a build takes it: the main file's path and the files it compiles, by normalised path. */
export interface CheckedUpload {
  readonly main: string
  /** The main file and every uploaded file it includes, directly or through another. */
  readonly files: ReadonlyMap<string, Uint8Array>
  /** Uploaded files that nothing from the main file includes: never compiled, never checked. */
  readonly ignored: ReadonlyArray<string>
}

const missingInclude = (path: string, line: number, target: string, resolved: string): UploadProblem => ({
  code: "compile_error",
  message: `${path}:${line}: include "${target}" names no file: ${resolved} was not uploaded, and it is no circomlib circuit. ` +
    `Upload ${resolved} with the circuit (over the API, a "sources" part whose filename is ${resolved}; with mzk circuits add, ` +
    `a file at that path under an --include folder), or include circomlib by its path, such as "circomlib/circuits/poseidon.circom"`,
  file: path,
  line
})

/**
 * The upload, its paths normalised, with the files the main file includes, after checking each
 * include as circom resolves it: from the including file's directory among the uploaded files
 * first, then from the library directory, where circomlib sits (`library`). Only what the main file
 * reaches is checked and compiled, so a stray file of the upload (an old experiment, a test
 * harness) neither fails nor joins the build. An include is refused when it is absolute or climbs
 * out of the upload from the including file's directory (`include_outside_upload`), and fails as
 * `compile_error` at its file and line when it names neither an uploaded file nor a library one:
 * circom's own message for that advises its `-l` flag, which an uploader does not have. Only the
 * files reached are written for circom, so it can read no uploaded file these checks skipped.
 */
export const checkUpload = (
  main: string,
  files: Readonly<Record<string, Uint8Array>>,
  library: (target: string) => boolean = circomlibHas
): CheckedUpload | UploadProblem => {
  const normalised = new Map<string, Uint8Array>()
  for (const [raw, bytes] of Object.entries(files)) {
    const path = normaliseUploadPath(raw)
    if (path === null) {
      return { code: "include_outside_upload", message: `upload path "${raw}" leaves the upload (absolute or with "..")`, file: raw }
    }
    if (normalised.has(path)) return { code: "compile_error", message: `upload path "${raw}" names the file "${path}" twice`, file: raw }
    normalised.set(path, bytes)
  }
  const mainPath = normaliseUploadPath(main)
  if (mainPath === null || !normalised.has(mainPath)) {
    return { code: "compile_error", message: `the main file "${main}" is not among the uploaded files` }
  }
  const decoder = new TextDecoder()
  const reached = new Map<string, Uint8Array>()
  const pending = [mainPath]
  for (let path = pending.shift(); path !== undefined; path = pending.shift()) {
    if (reached.has(path)) continue
    const bytes = normalised.get(path)!
    reached.set(path, bytes)
    const includes = includesOf(decoder.decode(bytes)).map((include) => ({
      ...include,
      resolved: posix.normalize(posix.join(posix.dirname(path), include.target))
    }))
    // Every include of the file is checked for leaving the upload before any is looked up, so no
    // include that leaves it goes unreported behind one that names nothing.
    for (const { line, resolved, target } of includes) {
      const absolute = target.startsWith("/") || /^[A-Za-z]:/.test(target) || target.includes("\\")
      if (absolute || resolved === ".." || resolved.startsWith("../") || posix.isAbsolute(resolved)) {
        return {
          code: "include_outside_upload",
          message: `${path}:${line}: include "${target}" leaves the upload; include uploaded files by relative path, or circomlib as "circomlib/circuits/…"`,
          file: path,
          line
        }
      }
    }
    for (const { line, resolved, target } of includes) {
      if (normalised.has(resolved)) pending.push(resolved)
      else if (!library(target)) return missingInclude(path, line, target, resolved)
    }
  }
  return { main: mainPath, files: reached, ignored: [...normalised.keys()].filter((path) => !reached.has(path)) }
}
