// Types for compile.mjs (plain JS so the build child, a bare node process, can load it).
import type { NoirProgram } from "./ultraHonk.js"
export declare const NOIR_VERSION: string
export type NoirFailure = {
  readonly ok: false
  readonly code: "invalid_upload" | "compile_error" | "internal"
  readonly message: string
  readonly file?: string
  readonly line?: number
}
export type NoirCompileAnswer = { readonly ok: true; readonly program: NoirProgram } | NoirFailure
export type NoirFiles = Readonly<Record<string, Uint8Array | string>>
export declare function checkNoirFiles(files: NoirFiles): NoirFailure | null
export declare function locateCompileError(message: string, projectDir: string, files: NoirFiles): { file?: string; line?: number }
export declare function compileNoirProject(files: NoirFiles): Promise<NoirCompileAnswer>
export declare function parseNoirProgram(bytes: Uint8Array | string): NoirCompileAnswer
