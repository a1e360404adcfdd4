// One Noir build, run like buildJob.mjs: a fresh `node noirJob.mjs` process whose parent sends one
// job over IPC and owns the time limit and memory ceiling (it kills this process). The job is
// { kind: "noir", files: { path: bytes } } (Nargo.toml + src/*.nr) or { kind: "acir", bytes } (a
// prebuilt program JSON); the answer is { ok: true, program } (the program as JSON text: an
// uploaded ABI may nest deeper than IPC's structured clone can copy, and the parent checks it) or
// { ok: false, code, message, file?, line? }, the shape buildJob answers in.
// @ts-check
import process from "node:process";
import { compileNoirProject, parseNoirProgram } from "../noir/compile.mjs";

/**
 * @typedef {Extract<import("./jobAnswer.js").JobSpec, { kind: "noir" | "acir" }>} NoirJob
 * @typedef {{ ok: true; program: string } | import("../noir/compile.mjs").NoirFailure} NoirJobAnswer
 */

/**
 * @param {NoirJob | undefined} job the parent's message, unchecked
 * @returns {Promise<NoirJobAnswer>}
 */
async function run(job) {
  const answer = job?.kind === "noir" ? await compileNoirProject(job.files) : job?.kind === "acir" ? parseNoirProgram(job.bytes) : undefined;
  if (answer === undefined) return { ok: false, code: "internal", message: `unknown Noir build job ${String(/** @type {{ kind?: unknown } | undefined} */ (job)?.kind)}` };
  if (!answer.ok) return answer;
  try {
    return { ok: true, program: JSON.stringify(answer.program) };
  } catch (e) {
    // JSON.stringify recurses: an uploaded program nested past the stack is the upload's fault.
    if (e instanceof RangeError) return { ok: false, code: "invalid_upload", message: "the program's JSON nests deeper than this server reads" };
    throw e;
  }
}

// A parent that dies closes the IPC channel; the build must not run on as an orphan.
process.on("disconnect", () => process.exit(1));

process.once("message", async (/** @type {NoirJob | undefined} */ job) => {
  /** @type {NoirJobAnswer} */
  let message;
  try {
    message = await run(job);
  } catch (e) {
    // The stack names the server's paths: stderr (the parent's log), not the account.
    process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
    message = { ok: false, code: "internal", message: "the Noir build failed unexpectedly; the server's log has the details" };
  }
  // Forked with an IPC channel: `send` is there.
  /** @type {NonNullable<typeof process.send>} */ (process.send)(message, () => process.exit(0));
});
