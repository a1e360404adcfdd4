// circom2 (circom compiled to WebAssembly) on a worker thread of the build job: the compile is
// one long synchronous WebAssembly call, and on a thread of its own it leaves the job's main
// thread free to notice its parent is gone and exit.
//
// circom2's own CLI preopens every parent directory of its cwd for WASI, so a source could read
// any file on the host; here only "." (the build directory) is preopened.

import { Buffer } from "node:buffer";
import fs from "node:fs";
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

const require = createRequire(import.meta.url);
const { CircomRunner, bindings } = require("circom2");

let output = "";
const capture = {
  ...fs,
  writeSync(fd, buf, offset, length, position) {
    if (fd === 1 || fd === 2) {
      const view = typeof buf === "string" ? Buffer.from(buf) : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
      const start = offset ?? 0;
      const len = length ?? view.length - start;
      output += view.subarray(start, start + len).toString("utf8");
      return len;
    }
    return fs.writeSync(fd, buf, offset, length, position);
  },
};

const runner = new CircomRunner({ args: workerData.args, env: {}, preopens: { ".": "." }, bindings: { ...bindings, fs: capture } });
try {
  await runner.execute(fs.readFileSync(require.resolve("circom2/circom.wasm")));
  parentPort.postMessage({ exitCode: 0, output });
} catch (e) {
  if (e && typeof e.code === "number") parentPort.postMessage({ exitCode: e.code, output });
  else parentPort.postMessage({ error: String(e?.message ?? e), rangeError: e instanceof RangeError, output });
}
