import { posix } from "node:path"

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

/**
 * The upload, its paths normalised, after checking that no include can leave it. circom resolves
 * an include against the including file's directory first and then the library directory (where
 * circomlib sits), so an include is refused when it is absolute or when its path, taken from the
 * including file's directory, climbs out of the upload; a path that stays inside but names no
 * uploaded file may still be a circomlib file.
 */
export const checkUpload = (
  main: string,
  files: Readonly<Record<string, Uint8Array>>
): { readonly main: string; readonly files: ReadonlyMap<string, Uint8Array> } | UploadProblem => {
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
  for (const [path, bytes] of normalised) {
    for (const { target, line } of includesOf(decoder.decode(bytes))) {
      const absolute = target.startsWith("/") || /^[A-Za-z]:/.test(target) || target.includes("\\")
      const resolved = posix.normalize(posix.join(posix.dirname(path), target))
      if (absolute || resolved === ".." || resolved.startsWith("../") || posix.isAbsolute(resolved)) {
        return {
          code: "include_outside_upload",
          message: `${path}:${line}: include "${target}" leaves the upload; include uploaded files by relative path, or circomlib as "circomlib/circuits/…"`,
          file: path,
          line
        }
      }
    }
  }
  return { main: mainPath, files: normalised }
}
