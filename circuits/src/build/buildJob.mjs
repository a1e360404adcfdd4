// One circuit build, run by CircuitCompilerLive as a child process (`node buildJob.mjs`) whose
// working directory is the build's temp dir. The parent sends one job over IPC and gets one
// answer back: { ok: true, ... } or { ok: false, code, message, file?, line? }. The parent owns
// the time limit and the memory ceiling (it kills this process), so nothing here guards them.
//
// Layout of the working directory:
//   src/<upload paths>   circom sources as uploaded (kind "circom")
//   lib/circomlib/...    circomlib's circuits, copied here by this job
//   out/                 circom's and snarkjs's outputs
//   in/                  prebuilt artifacts (kind "artifacts")

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";
import { URL } from "node:url";
import { Worker } from "node:worker_threads";
import * as snarkjs from "snarkjs";
import {
  BN128_R,
  FormatError,
  countsFromWasm,
  deriveSignals,
  inspectWitnessWasm,
  parseCircomErrors,
  readPtauHeader,
  readR1csHeader,
  readZkeyInfo,
  requiredPower,
} from "./formats.mjs";

const require = createRequire(import.meta.url);

class Failure extends Error {
  constructor(code, message, extra = {}) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
}

function runCircom(args) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./circomWorker.mjs", import.meta.url), { workerData: { args } });
    let answer = null;
    worker.on("message", (m) => (answer = m));
    worker.on("error", (e) =>
      reject(e instanceof RangeError ? new Failure("compile_memory_exceeded", `circom ran out of memory: ${e.message}`) : e),
    );
    worker.on("exit", () => {
      if (answer === null) return reject(new Failure("internal", "circom stopped without an answer"));
      if (answer.error === undefined) return resolve(answer);
      if (answer.rangeError) return reject(new Failure("compile_memory_exceeded", `circom ran out of memory: ${answer.error}`));
      reject(new Failure("compile_error", `circom crashed: ${answer.error}\n${answer.output}`.trim()));
    });
  });
}

function copyCircomlib() {
  const circuits = path.join(path.dirname(require.resolve("circomlib/package.json")), "circuits");
  fs.cpSync(circuits, path.join("lib", "circomlib", "circuits"), { recursive: true, dereference: true });
}

async function compile(main) {
  copyCircomlib();
  fs.mkdirSync("out", { recursive: true });
  const { exitCode, output } = await runCircom([path.posix.join("src", main), "--r1cs", "--wasm", "--sym", "--O2", "-l", "lib", "-o", "out"]);
  const base = path.posix.basename(main).replace(/\.circom$/, "");
  const files = {
    r1cs: path.join("out", `${base}.r1cs`),
    sym: path.join("out", `${base}.sym`),
    wasm: path.join("out", `${base}_js`, `${base}.wasm`),
  };
  const produced = Object.values(files).every((f) => fs.existsSync(f));
  // eslint-disable-next-line no-control-regex -- circom colours its output with ANSI escapes
  if (exitCode !== 0 || /(^|\n)(\x1b\[[0-9;]*m)*error(\[|:)/.test(output) || !produced) {
    const { message, file, line } = parseCircomErrors(output, ["src/", "./src/"]);
    const extra = {};
    if (file !== undefined) extra.file = file;
    if (line !== undefined) extra.line = line;
    throw new Failure("compile_error", message, extra);
  }
  return files;
}

/** The ptau to set up against: the operator's file, or the cached development one (made on first use). */
async function resolvePtau(job) {
  if (job.ptau) return { file: job.ptau, developmentOnly: false };
  if (job.developmentPtau) {
    const { power, dir } = job.developmentPtau;
    const file = path.join(dir, `dev_pot${power}.ptau`);
    if (!fs.existsSync(file)) await makeDevelopmentPtau(power, dir, file);
    return { file, developmentOnly: true };
  }
  throw new Failure(
    "internal",
    "this server has no powers of tau, so it cannot set up circom sources: start it with --ptau FILE (a phase-2 prepared ceremony file) or --dev-ptau (development only); prebuilt wasm + zkey uploads still work",
  );
}

// One local contribution: whoever runs this host could forge proofs, hence development only. Made
// under a unique temp name and renamed into place, so concurrent builds never read half a file.
async function makeDevelopmentPtau(power, dir, file) {
  fs.mkdirSync(dir, { recursive: true });
  const tag = `${process.pid}-${randomBytes(4).toString("hex")}`;
  const p0 = path.join(dir, `.dev_pot${power}_${tag}_0.ptau`);
  const p1 = path.join(dir, `.dev_pot${power}_${tag}_1.ptau`);
  const p2 = path.join(dir, `.dev_pot${power}_${tag}_final.ptau`);
  try {
    const curve = await snarkjs.curves.getCurveFromName("bn128");
    await snarkjs.powersOfTau.newAccumulator(curve, power, p0);
    await snarkjs.powersOfTau.contribute(p0, p1, "mzk development ptau", randomBytes(32).toString("hex"));
    await snarkjs.powersOfTau.preparePhase2(p1, p2);
    fs.renameSync(p2, file);
  } finally {
    for (const f of [p0, p1, p2]) fs.rmSync(f, { force: true });
  }
}

function readPtau(file) {
  let header;
  try {
    header = readPtauHeader(file);
  } catch (e) {
    throw new Failure("internal", `the server's powers of tau file is unusable: ${e.message}`);
  }
  if (!header.bn128) throw new Failure("internal", `the server's powers of tau file is for curve ${header.curve}, not bn128`);
  if (!header.prepared) throw new Failure("internal", "the server's powers of tau file is not prepared for phase 2 (snarkjs powersoftau prepare phase2)");
  return header;
}

async function buildCircom(job) {
  const ptau = await resolvePtau(job);
  const header = readPtau(ptau.file);
  const files = await compile(job.main);
  const r1csBytes = fs.readFileSync(files.r1cs);
  const r1cs = readR1csHeader(r1csBytes);
  const nPublic = r1cs.nOutputs + r1cs.nPubInputs;
  const need = requiredPower(r1cs.nConstraints, nPublic);
  if (need > header.power) {
    throw new Failure(
      "circuit_too_large",
      `the circuit needs powers of tau of power ${need} (${r1cs.nConstraints} constraints + ${nPublic} public signals + 1 must fit in 2^power), but the server's ptau has power ${header.power}`,
    );
  }
  const symText = fs.readFileSync(files.sym, "utf8");
  const { inputs, publicSignals } = deriveSignals(symText, r1cs);
  const z0 = path.join("out", "circuit_0000.zkey");
  const zkey = path.join("out", "circuit.zkey");
  const created = await snarkjs.zKey.newZKey(files.r1cs, ptau.file, z0);
  if (!created || typeof created !== "object") throw new Failure("internal", "snarkjs could not start the Groth16 setup");
  // snarkjs mixes its own random bytes into this text; the phase-2 toxic waste lives only in this process.
  await snarkjs.zKey.contribute(z0, zkey, "mzk server contribution", randomBytes(64).toString("hex"));
  fs.rmSync(z0, { force: true });
  const verificationKey = await snarkjs.zKey.exportVerificationKey(zkey);
  return {
    files: { ...files, zkey },
    constraints: r1cs.nConstraints,
    inputs,
    public_signals: publicSignals,
    verification_key: verificationKey,
    development_only: ptau.developmentOnly,
  };
}

const invalid = (what, e) => {
  if (e instanceof Failure) return e;
  return new Failure("invalid_artifacts", `${what}: ${e?.message ?? e}`);
};

async function checkArtifacts() {
  const zkeyBytes = fs.readFileSync(path.join("in", "circuit.zkey"));
  const wasmBytes = fs.readFileSync(path.join("in", "circuit.wasm"));
  const symText = fs.readFileSync(path.join("in", "circuit.sym"), "utf8");
  const r1csPath = path.join("in", "circuit.r1cs");
  const r1csBytes = fs.existsSync(r1csPath) ? fs.readFileSync(r1csPath) : null;

  let zkey;
  try {
    zkey = readZkeyInfo(zkeyBytes);
  } catch (e) {
    throw invalid("the zkey is not a Groth16 bn128 proving key", e);
  }
  let wasm;
  try {
    wasm = await inspectWitnessWasm(wasmBytes);
  } catch (e) {
    throw invalid("the wasm is not a circom witness calculator", e);
  }
  if (wasm.prime !== BN128_R) throw new Failure("invalid_artifacts", `the wasm computes in a field other than bn128's (prime ${wasm.prime})`);
  if (wasm.witnessSize !== zkey.nVars) {
    throw new Failure("artifact_mismatch", `the zkey is for a circuit with ${zkey.nVars} wires, the wasm computes ${wasm.witnessSize}`);
  }

  let counts;
  let constraints = zkey.nConstraints;
  if (r1csBytes !== null) {
    let r1cs;
    try {
      r1cs = readR1csHeader(r1csBytes);
    } catch (e) {
      throw invalid("the r1cs is not a circom constraint system", e);
    }
    if (r1cs.prime !== BN128_R) throw new Failure("invalid_artifacts", "the r1cs is for a field other than bn128's");
    if (r1cs.nVars !== zkey.nVars || r1cs.nOutputs + r1cs.nPubInputs !== zkey.nPublic || r1cs.nConstraints !== zkey.nConstraints) {
      throw new Failure(
        "artifact_mismatch",
        `the r1cs (${r1cs.nVars} wires, ${r1cs.nOutputs + r1cs.nPubInputs} public, ${r1cs.nConstraints} constraints) does not match the zkey (${zkey.nVars} wires, ${zkey.nPublic} public, ${zkey.nConstraints} constraints)`,
      );
    }
    if (r1cs.nPubInputs + r1cs.nPrvInputs !== wasm.inputSize) {
      throw new Failure("artifact_mismatch", `the r1cs has ${r1cs.nPubInputs + r1cs.nPrvInputs} inputs, the wasm ${wasm.inputSize}`);
    }
    counts = r1cs;
    constraints = r1cs.nConstraints;
  } else {
    try {
      counts = countsFromWasm(symText, zkey.nPublic, wasm);
    } catch (e) {
      throw new Failure("artifact_mismatch", e.message);
    }
  }

  let derived;
  try {
    derived = deriveSignals(symText, counts);
  } catch (e) {
    throw new Failure("artifact_mismatch", `the sym file does not match the circuit: ${e.message}`);
  }
  for (const input of derived.inputs) {
    const size = input.dimensions.reduce((a, b) => a * b, 1);
    if (wasm.inputSignalSize(input.name) !== size) {
      throw new Failure("artifact_mismatch", `the sym file names input ${input.name} (${size} values), which the wasm does not take`);
    }
  }

  let verificationKey;
  try {
    verificationKey = await snarkjs.zKey.exportVerificationKey(path.join("in", "circuit.zkey"));
    await checkKeyPoints(verificationKey);
  } catch (e) {
    throw invalid("the zkey is corrupt", e);
  }
  if (verificationKey.nPublic !== zkey.nPublic) throw new Failure("invalid_artifacts", "the zkey is corrupt: inconsistent public count");
  return {
    constraints,
    inputs: derived.inputs,
    public_signals: derived.publicSignals,
    verification_key: verificationKey,
    development_only: false,
  };
}

// A zkey whose points are off the curve parses fine and fails only when proving or verifying.
async function checkKeyPoints(vk) {
  const curve = await snarkjs.curves.getCurveFromName("bn128");
  const g1 = (p) => curve.G1.isValid(curve.G1.fromObject(p.map(BigInt)));
  const g2 = (p) => curve.G2.isValid(curve.G2.fromObject(p.map((c) => c.map(BigInt))));
  const ok =
    g1(vk.vk_alpha_1) && g2(vk.vk_beta_2) && g2(vk.vk_gamma_2) && g2(vk.vk_delta_2) && vk.IC.every((p) => g1(p));
  if (!ok) throw new FormatError("a verification key point is not on bn128");
}

async function run(job) {
  if (job.kind === "circom") return buildCircom(job);
  if (job.kind === "artifacts") return checkArtifacts();
  if (job.kind === "devptau") {
    const file = path.join(job.dir, `dev_pot${job.power}.ptau`);
    if (!fs.existsSync(file)) await makeDevelopmentPtau(job.power, job.dir, file);
    return { file };
  }
  throw new Failure("internal", `unknown build job ${job.kind}`);
}

function answer(message) {
  process.send(message, () => process.exit(0));
}

// A worker that dies (SIGKILL, crash) closes the IPC channel; its build must not run on as an
// orphan, since another worker takes the build over.
process.on("disconnect", () => process.exit(1));

process.once("message", async (job) => {
  try {
    const result = await run(job);
    answer({ ok: true, ...result });
  } catch (e) {
    if (e instanceof Failure) answer({ ok: false, code: e.code, message: e.message, ...e.extra });
    else if (e instanceof RangeError && /memory|allocation/i.test(e.message)) {
      answer({ ok: false, code: "compile_memory_exceeded", message: `the build ran out of memory: ${e.message}` });
    } else {
      // The stack names the server's paths: it goes to stderr, which the parent logs, not to the account.
      process.stderr.write(`${e?.stack ?? e}\n`);
      answer({ ok: false, code: "internal", message: "the build failed unexpectedly; the server's log has the details" });
    }
  }
});
