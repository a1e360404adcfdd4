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
// @ts-check

import { loadNativeProver } from "@mzk/prover-native";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import path from "node:path";
import process from "node:process";
import { URL } from "node:url";
import { Worker } from "node:worker_threads";
import * as snarkjs from "snarkjs";
import { snarkjsDependency } from "../snarkjsDeps.mjs";
import { nativeDevelopmentSetup, setUpDevelopmentKey } from "./developmentSetup.mjs";
import {
  BN128_R,
  constraintMismatch,
  countsFromWasm,
  deriveSignals,
  inspectWitnessWasm,
  parseCircomErrors,
  readPtauHeader,
  readR1csHeader,
  readR1csHeaderFile,
  readZkeyInfo,
  requiredPower,
} from "../formats/iden3.mjs";
import { contributeNative, nativePhase2 } from "./phase2.mjs";
import { checkZkeyPoints } from "./zkeyPoints.mjs";

const require = createRequire(import.meta.url);

/**
 * @typedef {import("./jobAnswer.js").JobSpec} JobSpec
 * @typedef {Extract<JobSpec, { kind: "circom" }>} CircomJob
 * @typedef {Extract<JobSpec, { kind: "artifacts" }>} ArtifactsJob
 * @typedef {import("@mzk/core").CircuitErrorCode} CircuitErrorCode
 * @typedef {import("@mzk/core").SetupSystem} SetupSystem
 * @typedef {import("@mzk/prover-native").NativeProverAddon} NativeProverAddon
 * @typedef {import("../formats/iden3.mjs").DerivedInput} DerivedInput
 * @typedef {import("../formats/iden3.mjs").R1csHeader} R1csHeader
 * @typedef {{ r1cs: string; sym: string; wasm: string }} CircomFiles
 * @typedef {{ file?: string; line?: number }} Location
 * @typedef {{ exitCode: number; output: string }} CircomRun
 *
 * What this job uses of snarkjs beyond src/snarkjs.d.ts (it ships no types).
 * @typedef {{
 *   powersOfTau: {
 *     newAccumulator(curve: unknown, power: number, file: string): Promise<unknown>
 *     contribute(from: string, to: string, name: string, entropy: string): Promise<unknown>
 *     preparePhase2(from: string, to: string): Promise<unknown>
 *   }
 *   zKey: {
 *     newZKey(r1cs: string, ptau: string, zkey: string): Promise<unknown>
 *     contribute(from: string, to: string, name: string, entropy: string): Promise<unknown>
 *     exportVerificationKey(zkey: string): Promise<{ nPublic: number } & Record<string, unknown>>
 *   }
 *   curves: typeof snarkjs.curves
 * } & Record<SetupSystem, {
 *   setup?(r1cs: string, ptau: string, zkey: string, logger: object): Promise<unknown>
 *   prove(zkey: Uint8Array, witness: Uint8Array): Promise<{ proof: unknown; publicSignals: Array<string> }>
 *   verify(vkey: unknown, publicSignals: ReadonlyArray<string>, proof: unknown): Promise<boolean>
 * }>} Snarkjs
 */
const SNARKJS = /** @type {Snarkjs} */ (/** @type {unknown} */ (snarkjs));

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

class Failure extends Error {
  /**
   * @param {CircuitErrorCode} code
   * @param {string} message
   * @param {Location} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
}

/**
 * @param {ReadonlyArray<string>} args
 * @returns {Promise<CircomRun>}
 */
function runCircom(args) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./circomWorker.mjs", import.meta.url), { workerData: { args } });
    /** @type {import("./circomWorker.mjs").CircomAnswer | null} */
    let answer = null;
    worker.on("message", (m) => (answer = m));
    worker.on("error", (e) =>
      reject(e instanceof RangeError ? new Failure("compile_memory_exceeded", `circom ran out of memory: ${e.message}`) : e),
    );
    worker.on("exit", () => {
      /** @type {import("./circomWorker.mjs").CircomAnswer | null} */
      const got = answer;
      if (got === null) return reject(new Failure("internal", "circom stopped without an answer"));
      if (!("error" in got)) return resolve(got);
      if (got.rangeError) return reject(new Failure("compile_memory_exceeded", `circom ran out of memory: ${got.error}`));
      reject(new Failure("compile_error", `circom crashed: ${got.error}\n${got.output}`.trim()));
    });
  });
}

function copyCircomlib() {
  const circuits = path.join(path.dirname(require.resolve("circomlib/package.json")), "circuits");
  fs.cpSync(circuits, path.join("lib", "circomlib", "circuits"), { recursive: true, dereference: true });
}

/**
 * @param {string} main
 * @returns {Promise<CircomFiles>}
 */
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
    /** @type {Location} */
    const extra = {};
    if (file !== undefined) extra.file = file;
    if (line !== undefined) extra.line = line;
    throw new Failure("compile_error", message, extra);
  }
  return files;
}

/**
 * The ptau to set up against: the operator's file, or the cached development one (made on first use).
 * @param {CircomJob} job
 */
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

/**
 * Tells the parent how the development ptau is coming along, and waits until the message is sent,
 * so it is logged (by the parent, which has the server's logger and clock) before the next step
 * keeps this process busy for minutes.
 * @param {object} event
 * @returns {Promise<void>}
 */
function progress(event) {
  return new Promise((resolve) => send({ progress: event }, () => resolve()));
}

// One local contribution: whoever runs this host could forge proofs, hence development only. Made
// under a unique temp name and renamed into place, so concurrent builds never read half a file.
/**
 * @param {number} power
 * @param {string} dir
 * @param {string} file
 */
async function makeDevelopmentPtau(power, dir, file) {
  fs.mkdirSync(dir, { recursive: true });
  const tag = `${process.pid}-${randomBytes(4).toString("hex")}`;
  const p0 = path.join(dir, `.dev_pot${power}_${tag}_0.ptau`);
  const p1 = path.join(dir, `.dev_pot${power}_${tag}_1.ptau`);
  const p2 = path.join(dir, `.dev_pot${power}_${tag}_final.ptau`);
  /** @type {ReadonlyArray<readonly [string, (curve: unknown) => Promise<unknown>]>} */
  const steps = [
    ["new accumulator", (curve) => SNARKJS.powersOfTau.newAccumulator(curve, power, p0)],
    ["contribution", () => SNARKJS.powersOfTau.contribute(p0, p1, "mzk development ptau", randomBytes(32).toString("hex"))],
    ["prepare phase 2", () => SNARKJS.powersOfTau.preparePhase2(p1, p2)],
  ];
  try {
    await progress({ event: "start", power, file, steps: steps.length });
    const curve = await snarkjs.curves.getCurveFromName("bn128");
    for (const [index, [step, run]] of steps.entries()) {
      await progress({ event: "step", step, index: index + 1, of: steps.length, state: "started" });
      await run(curve);
      await progress({ event: "step", step, index: index + 1, of: steps.length, state: "finished" });
    }
    fs.renameSync(p2, file);
    await progress({ event: "done", power, file, bytes: fs.statSync(file).size });
  } finally {
    for (const f of [p0, p1, p2]) fs.rmSync(f, { force: true });
  }
}

/** @param {string} file */
function readPtau(file) {
  let header;
  try {
    header = readPtauHeader(file);
  } catch (e) {
    throw new Failure("internal", `the server's powers of tau file is unusable: ${messageOf(e)}`);
  }
  if (!header.bn128) throw new Failure("internal", `the server's powers of tau file is for curve ${header.curve}, not bn128`);
  if (!header.prepared) throw new Failure("internal", "the server's powers of tau file is not prepared for phase 2 (snarkjs powersoftau prepare phase2)");
  return header;
}

/**
 * The phase 2 in the native engine (minutes instead of hours at 2^20; only the ptau sections the
 * circuit needs are read); false where the addon is not loaded or refuses this ptau, so snarkjs
 * does it (snarkjs accepts one case the native code refuses: a ptau of exactly the circuit's
 * power above 2^14 constraints).
 * @param {string} r1cs
 * @param {string} ptau
 * @param {string} zkey
 */
async function nativePhase2Setup(r1cs, ptau, zkey) {
  const addon = nativePhase2();
  if (addon === undefined) return false;
  try {
    await contributeNative({ r1cs, ptau, zkey, threads: availableParallelism(), addon });
    return true;
  } catch (e) {
    if (isInvalidInput(e)) return false;
    throw e;
  }
}

/** @param {unknown} e the native addon's refusal of its input, as opposed to a failure */
const isInvalidInput = (e) => e instanceof Error && "code" in e && e.code === "MZK_INVALID_INPUT";

/** @param {CircomJob} job */
async function buildCircom(job) {
  const system = job.system ?? "groth16";
  // Development mode with the addon: a Groth16 key straight from fresh toxic waste, no ptau, no size
  // cap but the build's own time and memory limits. Without the addon, snarkjs on the development
  // ptau; PLONK and FFLONK always set up from a ptau (the universal setup is all they need).
  const native = system === "groth16" && job.nativeSetup && !job.ptau ? nativeDevelopmentSetup() : undefined;
  if (native !== undefined) return buildCircomNatively(job, native);
  const ptau = await resolvePtau(job);
  const header = readPtau(ptau.file);
  const files = await compile(job.main);
  const r1csBytes = fs.readFileSync(files.r1cs);
  const r1cs = readR1csHeader(r1csBytes);
  const nPublic = r1cs.nOutputs + r1cs.nPubInputs;
  if (system !== "groth16") {
    const { inputs, publicSignals } = deriveSignals(fs.readFileSync(files.sym, "utf8"), r1cs);
    const zkey = path.join("out", "circuit.zkey");
    await universalSetup(system, files.r1cs, ptau.file, zkey, header.power);
    return built(files, zkey, r1cs, inputs, publicSignals, ptau.developmentOnly, system);
  }
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
  if (!(await nativePhase2Setup(files.r1cs, ptau.file, zkey))) {
    const created = await SNARKJS.zKey.newZKey(files.r1cs, ptau.file, z0);
    if (!created || typeof created !== "object") throw new Failure("internal", "snarkjs could not start the Groth16 setup");
    // snarkjs mixes its own random bytes into this text; the phase-2 toxic waste lives only in this process.
    await SNARKJS.zKey.contribute(z0, zkey, "mzk server contribution", randomBytes(64).toString("hex"));
    fs.rmSync(z0, { force: true });
  }
  return built(files, zkey, r1cs, inputs, publicSignals, ptau.developmentOnly, "groth16");
}

/**
 * @param {CircomJob} job
 * @param {NativeProverAddon} addon
 */
async function buildCircomNatively(job, addon) {
  const files = await compile(job.main);
  const r1cs = readR1csHeaderFile(files.r1cs);
  const { inputs, publicSignals } = deriveSignals(fs.readFileSync(files.sym, "utf8"), r1cs);
  const zkey = path.join("out", "circuit.zkey");
  await setUpDevelopmentKey(addon, files.r1cs, zkey, { threads: availableParallelism(), name: "mzk development setup" });
  return built(files, zkey, r1cs, inputs, publicSignals, true, "groth16");
}

/**
 * PLONK or FFLONK's setup: the circuit's key from the universal powers of tau alone, no phase 2.
 * Neither says how large a ptau it needs before it has turned the r1cs into its own gates, so a
 * ptau too small is found by the setup itself and reported as the circuit's error.
 * @param {SetupSystem} system
 * @param {string} r1cs
 * @param {string} ptau
 * @param {string} zkey
 * @param {number} power
 */
async function universalSetup(system, r1cs, ptau, zkey, power) {
  /** @type {Array<string>} */
  const refused = [];
  const logger = { debug() {}, info() {}, warn() {}, error: (/** @type {unknown} */ message) => refused.push(String(message)) };
  /** @param {string} why */
  const tooLarge = (why) =>
    new Failure(
      "circuit_too_large",
      `the circuit is too large for ${system} on the server's powers of tau (power ${power}): ${why}; ${system === "fflonk" ? "FFLONK needs a ptau about 8 times the circuit's PLONK domain" : "PLONK needs a ptau covering its gates, usually more than the r1cs constraints"}`,
    );
  // Each system's setup by name: a system added to the list without one is refused here, never
  // set up as another.
  /** @type {Partial<Record<SetupSystem, ((r1cs: string, ptau: string, zkey: string, logger: object) => Promise<unknown>) | undefined>>} */
  const setups = { plonk: SNARKJS.plonk.setup, fflonk: SNARKJS.fflonk.setup };
  const setup = Object.hasOwn(setups, system) ? setups[system] : undefined;
  if (setup === undefined) throw new Failure("internal", `no setup for the ${system} proving system from a powers of tau`);
  try {
    const result = await setup(r1cs, ptau, zkey, logger);
    if (result === -1 || refused.length > 0) {
      const why = refused.join("; ") || "the setup refused the ptau";
      if (/too big|not big enough/i.test(why)) throw tooLarge(why);
      throw new Failure("internal", `the ${system} setup failed: ${why}`);
    }
  } catch (e) {
    if (e instanceof Failure) throw e;
    if (/not big enough|too big/i.test(messageOf(e))) throw tooLarge(messageOf(e));
    throw e;
  }
}

/**
 * What a circom build answers, however its key was made.
 * @param {CircomFiles} files
 * @param {string} zkey
 * @param {R1csHeader} r1cs
 * @param {ReadonlyArray<DerivedInput>} inputs
 * @param {ReadonlyArray<string>} publicSignals
 * @param {boolean} developmentOnly
 * @param {SetupSystem} system
 */
async function built(files, zkey, r1cs, inputs, publicSignals, developmentOnly, system) {
  return {
    files: { ...files, zkey },
    constraints: r1cs.nConstraints,
    inputs,
    public_signals: publicSignals,
    verification_key: await SNARKJS.zKey.exportVerificationKey(zkey),
    proving_system: system,
    development_only: developmentOnly,
  };
}

/**
 * @param {string} what
 * @param {unknown} e
 */
const invalid = (what, e) => {
  if (e instanceof Failure) return e;
  return new Failure("invalid_artifacts", `${what}: ${messageOf(e)}`);
};

/** @param {ArtifactsJob} job */
async function checkArtifacts(job) {
  const zkeyBytes = fs.readFileSync(path.join("in", "circuit.zkey"));
  const wasmBytes = fs.readFileSync(path.join("in", "circuit.wasm"));
  const symText = fs.readFileSync(path.join("in", "circuit.sym"), "utf8");
  const r1csPath = path.join("in", "circuit.r1cs");
  const r1csBytes = fs.existsSync(r1csPath) ? fs.readFileSync(r1csPath) : null;

  let zkey;
  try {
    zkey = readZkeyInfo(zkeyBytes);
  } catch (e) {
    throw invalid("the zkey is not a snarkjs bn128 proving key (groth16, plonk or fflonk)", e);
  }
  const system = zkey.protocol;
  if (job.system && job.system !== system) {
    throw new Failure("invalid_artifacts", `the zkey is set up for ${system}, not ${job.system} as the upload says`);
  }
  let wasm;
  try {
    wasm = await inspectWitnessWasm(wasmBytes);
  } catch (e) {
    throw invalid("the wasm is not a circom witness calculator", e);
  }
  if (wasm.prime !== BN128_R) throw new Failure("invalid_artifacts", `the wasm computes in a field other than bn128's (prime ${wasm.prime})`);
  if (wasm.witnessSize !== zkey.nWitness) {
    throw new Failure("artifact_mismatch", `the zkey is for a circuit with ${zkey.nWitness} wires, the wasm computes ${wasm.witnessSize}`);
  }

  let counts;
  // A PLONK/FFLONK header counts its gates; without an r1cs the count is that.
  let constraints = zkey.nConstraints;
  if (r1csBytes !== null) {
    let r1cs;
    try {
      r1cs = readR1csHeader(r1csBytes);
    } catch (e) {
      throw invalid("the r1cs is not a circom constraint system", e);
    }
    if (r1cs.prime !== BN128_R) throw new Failure("invalid_artifacts", "the r1cs is for a field other than bn128's");
    if (
      r1cs.nVars !== zkey.nWitness || r1cs.nOutputs + r1cs.nPubInputs !== zkey.nPublic || (system === "groth16" && r1cs.nConstraints !== zkey.nConstraints)
    ) {
      throw new Failure(
        "artifact_mismatch",
        `the r1cs (${r1cs.nVars} wires, ${r1cs.nOutputs + r1cs.nPubInputs} public, ${r1cs.nConstraints} constraints) does not match the zkey (${zkey.nWitness} wires, ${zkey.nPublic} public, ${zkey.nConstraints} constraints)`,
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
      throw new Failure("artifact_mismatch", messageOf(e));
    }
  }

  let derived;
  try {
    derived = deriveSignals(symText, counts);
  } catch (e) {
    throw new Failure("artifact_mismatch", `the sym file does not match the circuit: ${messageOf(e)}`);
  }
  for (const input of derived.inputs) {
    const size = input.dimensions.reduce((a, b) => a * b, 1);
    if (wasm.inputSignalSize(input.name) !== size) {
      throw new Failure("artifact_mismatch", `the sym file names input ${input.name} (${size} values), which the wasm does not take`);
    }
  }

  const native = loadNativeProver();
  const addon = native.ok ? native.addon : undefined;
  const threads = availableParallelism();
  let verificationKey;
  try {
    // The Groth16 key's points one by one; a PLONK/FFLONK key is checked by the proof below.
    if (system === "groth16") await checkZkeyPoints(zkeyBytes, { addon, threads });
    verificationKey = await SNARKJS.zKey.exportVerificationKey(path.join("in", "circuit.zkey"));
  } catch (e) {
    throw invalid("the zkey is corrupt", e);
  }
  if (verificationKey.nPublic !== zkey.nPublic) throw new Failure("invalid_artifacts", "the zkey is corrupt: inconsistent public count");
  await checkOneCircuit({ zkeyBytes, wasmBytes, r1csBytes, inputs: derived.inputs, verificationKey, wires: zkey.nWitness, addon, threads, system });
  return {
    constraints,
    inputs: derived.inputs,
    public_signals: derived.publicSignals,
    verification_key: verificationKey,
    proving_system: system,
    development_only: false,
  };
}

const SAMPLE_INPUTS = path.join("in", "sample_inputs.json");

/**
 * Do the zkey, the wasm and the sym describe one circuit? Wire counts and signal names can agree
 * between two circuits, so the check is the circuit itself: the zkey's constraints against the
 * r1cs, when one was sent, and a proof of one witness that the wasm computes (from the sample
 * inputs, else the all-zero input), made with the zkey and verified with its verification key.
 * With no witness (the all-zero input fails the circuit) and no r1cs nothing can be checked, and
 * the upload is refused: the circuit would be `ready` with every proof failing if they did not fit.
 * @param {{
 *   zkeyBytes: Uint8Array
 *   wasmBytes: Uint8Array
 *   r1csBytes: Uint8Array | null
 *   inputs: ReadonlyArray<DerivedInput>
 *   verificationKey: unknown
 *   wires: number
 *   addon: NativeProverAddon | undefined
 *   threads: number
 *   system: SetupSystem
 * }} circuit
 */
async function checkOneCircuit({ zkeyBytes, wasmBytes, r1csBytes, inputs, verificationKey, wires, addon, threads, system }) {
  // Groth16's coefficients are the r1cs's; PLONK/FFLONK keys hold gates, so only the proof below tells.
  if (r1csBytes !== null && system === "groth16") {
    let differs;
    try {
      differs = constraintMismatch(zkeyBytes, r1csBytes);
    } catch (e) {
      throw invalid("the r1cs is not a circom constraint system", e);
    }
    if (differs !== undefined) {
      throw new Failure(
        "artifact_mismatch",
        `the zkey's constraints are not the r1cs's (${differs}): the zkey was set up for another circuit; send the zkey set up from this r1cs`,
      );
    }
  }
  const sample = fs.existsSync(SAMPLE_INPUTS) ? sampleInputs(fs.readFileSync(SAMPLE_INPUTS, "utf8"), inputs) : undefined;
  const what = sample === undefined ? "the all-zero input" : "the sample inputs";
  let wtns;
  try {
    const { WitnessCalculatorBuilder } = await snarkjsDependency("circom_runtime");
    const calculator = await WitnessCalculatorBuilder(wasmBytes);
    wtns = /** @type {Uint8Array} */ (await calculator.calculateWTNSBin(sample ?? zeroInputs(inputs), 0));
  } catch (e) {
    const reason = witnessError(e);
    if (sample !== undefined) {
      throw new Failure("invalid_artifacts", `the sample inputs are refused by the wasm (${reason}): send one input this circuit accepts, as the JSON object of a proof's inputs`);
    }
    // The r1cs comparison above was the check.
    if (r1csBytes !== null && system === "groth16") return;
    throw new Failure(
      "sample_inputs_required",
      `mzk proves one witness to check that the zkey belongs to the wasm and sym, but the all-zero input fails this circuit (${reason}): send sample_inputs (one input the circuit accepts, as JSON) or the circuit's r1cs`,
    );
  }
  let out;
  try {
    out = system !== "groth16"
      ? await SNARKJS[system].prove(zkeyBytes, wtns)
      : addon === undefined
      ? await SNARKJS.groth16.prove(zkeyBytes, wtns)
      : proveNatively(addon, zkeyBytes, wtns, threads);
  } catch (e) {
    if (system === "groth16" && addon !== undefined && !isInvalidInput(e)) throw e;
    throw invalid("the zkey cannot prove the wasm's witness", e);
  }
  if (!(await SNARKJS[system].verify(verificationKey, out.publicSignals, out.proof))) {
    throw new Failure(
      "artifact_mismatch",
      `a proof of ${what}, made with the zkey from the wasm's witness, does not verify against the zkey's verification key: the zkey is for another circuit than the wasm and sym (though both have ${wires} wires); send the zkey set up from this circuit's r1cs`,
    );
  }
}

/**
 * One proof on a key loaded for it alone: no shared cache, no precomputed tables.
 * @param {NativeProverAddon} addon
 * @param {Uint8Array} zkeyBytes
 * @param {Uint8Array} wtns
 * @param {number} threads
 */
function proveNatively(addon, zkeyBytes, wtns, threads) {
  const handle = addon.loadZkey(zkeyBytes, { cache: false, tableBudgetMB: 0, threads });
  try {
    return addon.prove(handle, wtns, { threads });
  } finally {
    addon.unloadZkey(handle);
  }
}

/**
 * The sample inputs as the witness calculator takes them: a JSON object naming only the circuit's inputs.
 * @param {string} text
 * @param {ReadonlyArray<DerivedInput>} inputs
 * @returns {Record<string, unknown>}
 */
function sampleInputs(text, inputs) {
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Failure("invalid_artifacts", `the sample inputs are not JSON: ${messageOf(e)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Failure("invalid_artifacts", "the sample inputs must be a JSON object of the circuit's inputs by name, as a proof's inputs are");
  }
  const names = new Set(inputs.map((input) => input.name));
  const unknown = Object.keys(value).filter((name) => !names.has(name));
  if (unknown.length > 0) {
    throw new Failure(
      "invalid_artifacts",
      `the sample inputs name ${unknown.join(", ")}, not an input of this circuit (its inputs: ${[...names].join(", ") || "none"})`,
    );
  }
  return /** @type {Record<string, unknown>} */ (value);
}

/**
 * Every input of the circuit, arrays in their dimensions, set to 0.
 * @param {ReadonlyArray<DerivedInput>} inputs
 */
const zeroInputs = (inputs) => {
  /**
   * @param {ReadonlyArray<number>} dimensions
   * @returns {unknown}
   */
  const zeros = (dimensions) => (dimensions.length === 0 ? "0" : Array.from({ length: dimensions[0] ?? 0 }, () => zeros(dimensions.slice(1))));
  return Object.fromEntries(inputs.map((input) => [input.name, zeros(input.dimensions)]));
};

/**
 * The witness calculator's reason, on one line ("Assert Failed. Error in template T_0 line: 6").
 * @param {unknown} e
 */
const witnessError = (e) =>
  messageOf(e)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ")
    .replace(/^Error:\s*/, "")
    .slice(0, 300);

/** @param {JobSpec} job */
async function run(job) {
  if (job.kind === "circom") return buildCircom(job);
  if (job.kind === "artifacts") return checkArtifacts(job);
  if (job.kind === "devptau") {
    const file = path.join(job.dir, `dev_pot${job.power}.ptau`);
    if (!fs.existsSync(file)) await makeDevelopmentPtau(job.power, job.dir, file);
    return { file };
  }
  throw new Failure("internal", `unknown build job ${/** @type {{ kind?: unknown }} */ (job).kind}`);
}

// Forked with an IPC channel: `send` is there.
const send = /** @type {NonNullable<typeof process.send>} */ (process.send).bind(process);

/** @param {object} message */
function answer(message) {
  send(message, () => process.exit(0));
}

// A worker that dies (SIGKILL, crash) closes the IPC channel; its build must not run on as an
// orphan, since another worker takes the build over.
process.on("disconnect", () => process.exit(1));

process.once("message", async (/** @type {JobSpec} */ job) => {
  try {
    const result = await run(job);
    answer({ ok: true, ...result });
  } catch (e) {
    if (e instanceof Failure) answer({ ok: false, code: e.code, message: e.message, ...e.extra });
    else if (e instanceof RangeError && /memory|allocation/i.test(e.message)) {
      answer({ ok: false, code: "compile_memory_exceeded", message: `the build ran out of memory: ${e.message}` });
    } else {
      // The stack names the server's paths: it goes to stderr, which the parent logs, not to the account.
      process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
      answer({ ok: false, code: "internal", message: "the build failed unexpectedly; the server's log has the details" });
    }
  }
});
