// Noir compilation with @noir-lang/noir_wasm, in plain JS so the build child (a bare node process,
// like buildJob.mjs) and in-process callers share one implementation. Answers are data, never
// throws: { ok: true, program } or { ok: false, code, message, file?, line? } in the shape the
// circom build reports (CircuitError in @mzk/core).
// @ts-check
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { TextDecoder } from "node:util";
import { importOptional } from "../optionalPackages.mjs";

/**
 * @typedef {import("./ultraHonk.js").NoirProgram} NoirProgram
 * @typedef {{
 *   readonly ok: false
 *   readonly code: "invalid_upload" | "compile_error" | "internal"
 *   readonly message: string
 *   readonly file?: string
 *   readonly line?: number
 * }} NoirFailure
 * @typedef {{ readonly ok: true; readonly program: NoirProgram } | NoirFailure} NoirCompileAnswer
 * @typedef {Readonly<Record<string, Uint8Array | string>>} NoirFiles
 * @typedef {{ file?: string; line?: number }} NoirLocation
 */

/** The noirc version these modules are pinned to; bb.js 0.82.2 reads its ACIR. */
export const NOIR_VERSION = "1.0.0-beta.3";

/**
 * @param {NoirFailure["code"]} code
 * @param {string} message
 * @param {NoirLocation} [extra]
 * @returns {NoirFailure}
 */
const fail = (code, message, extra = {}) => ({ ok: false, code, message, ...extra });

// An upload is Nargo.toml plus src/**/*.nr, nothing else: noir_wasm's dependency manager fetches
// git dependencies from the network at compile time, which a build must never do.
const SOURCE_PATH = /^src\/(?:[A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]+\.nr$/;

/**
 * @param {string} text
 * @returns {NoirFailure | null}
 */
function checkManifest(text) {
  let section = "";
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, "").trim();
    if (line === "") continue;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      section = (header[1] ?? "").trim();
      continue;
    }
    if (section === "dependencies")
      return fail("invalid_upload", "Nargo.toml: dependencies are not supported (a build never downloads); inline the code under src/", { file: "Nargo.toml" });
    if (section === "package") {
      const type = /^type\s*=\s*"([^"]*)"$/.exec(line);
      if (type && type[1] !== "bin")
        return fail("invalid_upload", `Nargo.toml: package type "${type[1]}" cannot be proven; only "bin" programs`, { file: "Nargo.toml" });
    }
  }
  return null;
}

/**
 * Checks an upload's file set: Nargo.toml, src/main.nr, only src/**\/*.nr besides. Returns a
 * failure answer or null.
 * @param {NoirFiles} files
 * @returns {NoirFailure | null}
 */
export function checkNoirFiles(files) {
  const names = Object.keys(files);
  if (!names.includes("Nargo.toml")) return fail("invalid_upload", "a Noir upload needs Nargo.toml at its root", { file: "Nargo.toml" });
  if (!names.includes("src/main.nr")) return fail("invalid_upload", "a Noir upload needs src/main.nr", { file: "src/main.nr" });
  for (const name of names) {
    if (name !== "Nargo.toml" && !SOURCE_PATH.test(name))
      return fail("invalid_upload", `${name}: only Nargo.toml and src/**/*.nr are accepted`, { file: name });
  }
  return checkManifest(text(files["Nargo.toml"] ?? ""));
}

/** @param {Uint8Array | string} content */
const text = (content) => (typeof content === "string" ? content : new TextDecoder().decode(content));

// noir_wasm throws an Error whose message is its log: "  <message>" then, per labelled span,
// "    <absolute path>:<line>: <source text>". Its line is the index of the first line starting
// after the span, i.e. 1-based, or -1 when the span is on the last line.
const LOCATION = /^ {4}(.+?):(-?\d+): /m;

/**
 * @param {string} message
 * @param {string} projectDir
 * @param {NoirFiles} files
 * @returns {NoirLocation}
 */
export function locateCompileError(message, projectDir, files) {
  const found = LOCATION.exec(message);
  if (!found || found[1] === undefined) return {};
  const file = path.relative(projectDir, found[1]).split(path.sep).join("/");
  if (!(file in files)) return {};
  let line = Number(found[2]);
  if (line === -1) line = text(files[file] ?? "").split("\n").length;
  return line > 0 ? { file, line } : { file };
}

/**
 * What this file uses of noir_wasm.
 * @typedef {{
 *   createFileManager(dir: string): unknown
 *   compile_program(fm: unknown, path: undefined, log: () => void, debug: () => void): Promise<{ program: NoirProgram }>
 * }} NoirWasm
 */

/**
 * Loads noir_wasm; a clear failure when the optional dependency is not installed.
 * @returns {Promise<{ readonly ok: true; readonly module: NoirWasm } | NoirFailure>}
 */
async function loadNoirWasm() {
  try {
    return { ok: true, module: /** @type {NoirWasm} */ (await importOptional("@noir-lang/noir_wasm")) };
  } catch (e) {
    return fail("internal", e instanceof Error ? e.message : String(e));
  }
}

/**
 * Compiles a Noir project given as { path: bytes | string } (Nargo.toml, src/*.nr) into its
 * program artifact: { noir_version, hash, abi, bytecode (base64 gzipped ACIR), ... }.
 * @param {NoirFiles} files
 * @returns {Promise<NoirCompileAnswer>}
 */
export async function compileNoirProject(files) {
  const bad = checkNoirFiles(files);
  if (bad) return bad;
  const loaded = await loadNoirWasm();
  if (!loaded.ok) return loaded;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mzk-noir-"));
  try {
    for (const [name, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), content);
    }
    const quiet = () => {};
    try {
      const { program } = await loaded.module.compile_program(loaded.module.createFileManager(dir), undefined, quiet, quiet);
      return { ok: true, program: stripProgram(program) };
    } catch (e) {
      const message = (e instanceof Error ? e.message : String(e)).replaceAll(dir + path.sep, "").trim();
      const raw = e instanceof Error ? e.message : String(e);
      return fail("compile_error", message === "" ? "the Noir compiler failed" : message, locateCompileError(raw, dir, files));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// What proving and verifying need; debug symbols and the file map stay out of storage (they
// hold the uploaded source text, which the circuit's upload already keeps).
/**
 * @param {NoirProgram} program
 * @returns {NoirProgram}
 */
function stripProgram(program) {
  return { noir_version: program.noir_version, ...(program.hash === undefined ? {} : { hash: program.hash }), abi: program.abi, bytecode: program.bytecode };
}

/**
 * Reads a prebuilt program artifact (nargo's target/<name>.json, or noir_wasm's program): JSON
 * with `bytecode` (base64) and `abi.parameters`. A failure names what is wrong.
 * @param {Uint8Array | string} bytes
 * @returns {NoirCompileAnswer}
 */
export function parseNoirProgram(bytes) {
  /** @type {any} JSON of any shape, checked field by field below */
  let json;
  try {
    json = JSON.parse(text(bytes));
  } catch (e) {
    return fail("invalid_upload", `the ACIR program is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return fail("invalid_upload", "the ACIR program must be a JSON object");
  if (typeof json.bytecode !== "string" || !/^[A-Za-z0-9+/]+={0,2}$/.test(json.bytecode))
    return fail("invalid_upload", "the ACIR program's bytecode must be a base64 string");
  const abi = json.abi;
  if (typeof abi !== "object" || abi === null || !Array.isArray(abi.parameters))
    return fail("invalid_upload", "the ACIR program's abi must have a parameters array");
  if (typeof json.noir_version === "string" && !json.noir_version.startsWith(NOIR_VERSION))
    return fail("invalid_upload", `the ACIR program was compiled by noirc ${json.noir_version}; this server reads ${NOIR_VERSION} programs (the ACIR format changes between versions)`);
  return { ok: true, program: stripProgram(json) };
}
