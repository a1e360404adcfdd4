// circom2 (circom compiled to WebAssembly) on a worker thread of the build job: the compile is
// one long synchronous WebAssembly call, and on a thread of its own it leaves the job's main
// thread free to notice its parent is gone and exit.
//
// circom2's own CLI preopens every parent directory of its cwd for WASI, so a source could read
// any file on the host; here only "." (the build directory) is preopened.
// @ts-check

import { Buffer } from "node:buffer";
import fs from "node:fs";
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

const require = createRequire(import.meta.url);
/** @type {typeof import("circom2")} */
const { CircomRunner, bindings } = require("circom2");

/**
 * What this thread answers buildJob.mjs: circom's exit code and output, or why it did not finish.
 * @typedef {{ exitCode: number; output: string } | { error: string; rangeError: boolean; output: string }} CircomAnswer
 */

// Started as a worker by buildJob.mjs: never without a parent port.
const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
/** @type {{ args: ReadonlyArray<string> }} */
const data = workerData;
/** @param {CircomAnswer} answer */
const reply = (answer) => port.postMessage(answer);

let output = "";
const capture = {
  ...fs,
  /**
   * @param {number} fd
   * @param {string | NodeJS.ArrayBufferView} buf
   * @param {number} [offset]
   * @param {number} [length]
   * @param {number | null} [position]
   */
  writeSync(fd, buf, offset, length, position) {
    if (fd === 1 || fd === 2) {
      const view = typeof buf === "string" ? Buffer.from(buf) : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
      const start = offset ?? 0;
      const len = length ?? view.length - start;
      output += view.subarray(start, start + len).toString("utf8");
      return len;
    }
    // WASI writes bytes to every other descriptor.
    return fs.writeSync(fd, /** @type {NodeJS.ArrayBufferView} */ (buf), offset, length, position);
  },
};

const runner = new CircomRunner({ args: data.args, env: {}, preopens: { ".": "." }, bindings: { ...bindings, fs: capture } });
try {
  await runner.execute(fs.readFileSync(require.resolve("circom2/circom.wasm")));
  reply({ exitCode: 0, output });
} catch (e) {
  // WASI's exit: circom's own exit code.
  const code = typeof e === "object" && e !== null && "code" in e && typeof e.code === "number" ? e.code : undefined;
  if (code !== undefined) reply({ exitCode: code, output });
  else reply({ error: e instanceof Error ? e.message : String(e), rangeError: e instanceof RangeError, output });
}
