#!/usr/bin/env node
// Offline build pipeline for the mzk circuits (run from anywhere; paths are
// resolved from this file).
//
//   node scripts/build.mjs [--ptau file.ptau] [--only name,name] [--fresh] [--verbose]
//   node scripts/build.mjs --universal [--ptau-power N] [--only name,name]
//
// --universal leaves the Groth16 keys as they are and adds PLONK and FFLONK keys
// (build/<name>/<name>.<system>.zkey, verification_key.<system>.json) from a
// powers of tau alone, listed under the manifest's `systems`; a system whose
// setup the ptau is too small for is left out of that circuit (and logged).
//
// For each circuit in circom/: compile with circom2 (WebAssembly build of circom,
// no downloads) -> Groth16 setup with snarkjs -> build/<name>/{<name>.wasm,
// <name>.zkey, verification_key.json}.
//
// Without --ptau a DEVELOPMENT-ONLY powers of tau is generated locally (one
// contribution on this machine; its toxic waste is not provably destroyed).
// With --ptau a prepared (phase 2) ceremony file is used instead, e.g. one of
// the Hermez / Perpetual Powers of Tau "final_<power>.ptau" files.
//
// Intermediate files (r1cs, witness-generator JS, ptau, intermediate zkeys)
// go to .cache/ (git-ignored); only the final artifacts go to build/.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as snarkjs from "snarkjs";

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SRC = path.join(ROOT, "circom");
const BUILD = path.join(ROOT, "build");
const CACHE = path.join(ROOT, ".cache");

export const CIRCUITS = ["multiplier", "range", "hash_preimage", "merkle_membership"];

// Fixed, public entropy text. snarkjs additionally mixes 64 random bytes into
// every contribution, so the keys differ between builds; either way this setup
// is for development only.
const ENTROPY = "mzk development trusted setup - NOT FOR PRODUCTION";

function parseArgs(argv) {
  const opts = { ptau: null, only: null, fresh: false, verbose: false, universal: false, ptauPower: 14 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--ptau") opts.ptau = argv[++i];
    else if (a.startsWith("--ptau=")) opts.ptau = a.slice(7);
    else if (a === "--only") opts.only = argv[++i].split(",");
    else if (a.startsWith("--only=")) opts.only = a.slice(7).split(",");
    else if (a === "--fresh") opts.fresh = true;
    else if (a === "--universal") opts.universal = true;
    else if (a === "--ptau-power") opts.ptauPower = Number(argv[++i]);
    else if (a === "--verbose" || a === "-v") opts.verbose = true;
    else if (a === "--help" || a === "-h") {
      console.log("usage: node scripts/build.mjs [--ptau file.ptau] [--only a,b] [--fresh] [--verbose]");
      process.exit(0);
    } else throw new Error(`unknown argument: ${a}`);
  }
  if (opts.ptau === undefined || opts.ptau === "") throw new Error("--ptau needs a file path");
  if (opts.ptau) {
    opts.ptau = path.resolve(opts.ptau);
    if (!fs.existsSync(opts.ptau)) throw new Error(`ptau file not found: ${opts.ptau}`);
  }
  for (const n of opts.only ?? []) {
    if (!CIRCUITS.includes(n)) throw new Error(`unknown circuit: ${n}`);
  }
  return opts;
}

function makeLogger(verbose) {
  const p = (lvl) => (...m) => console.log(`  [snarkjs ${lvl}]`, ...m);
  return {
    debug: verbose ? p("debug") : () => {},
    info: verbose ? p("info") : () => {},
    warn: p("warn"),
    error: p("error"),
  };
}

const t0 = Date.now();
function step(msg) {
  console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}`);
}

// Compile one circuit with the circom2 CLI in a child process. The CLI runs
// the bundled circom.wasm under WASI and needs no network access.
function compile(name, outDir) {
  const cli = require.resolve("circom2/cli.js");
  // circom2 runs under WASI with only the working directory preopened, and pnpm's
  // node_modules are symlinks that point outside it, so the includes are copied
  // into .cache/lib first (include "circomlib/circuits/...").
  const libDir = path.join(CACHE, "lib");
  const circomlibCircuits = path.join(path.dirname(require.resolve("circomlib/package.json")), "circuits");
  fs.rmSync(libDir, { recursive: true, force: true });
  fs.cpSync(circomlibCircuits, path.join(libDir, "circomlib", "circuits"), { recursive: true, dereference: true });
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  // circom2 maps paths relative to the working directory into its WASI
  // sandbox, so run it from ROOT with relative paths.
  const rel = (p) => path.relative(ROOT, p) || ".";
  const args = [
    cli,
    rel(path.join(SRC, `${name}.circom`)),
    "--r1cs",
    "--wasm",
    "--O2",
    "-l",
    rel(libDir),
    "-o",
    rel(outDir),
  ];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8" });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.status !== 0 || /error\[/i.test(out)) {
    console.error(out);
    throw new Error(`circom2 failed for ${name} (exit ${r.status})`);
  }
  const r1cs = path.join(outDir, `${name}.r1cs`);
  const wasm = path.join(outDir, `${name}_js`, `${name}.wasm`);
  if (!fs.existsSync(r1cs) || !fs.existsSync(wasm)) {
    console.error(out);
    throw new Error(`circom2 produced no r1cs/wasm for ${name}`);
  }
  const version = (out.match(/circom compiler (\S+)/) || [])[1];
  return { r1cs, wasm, version };
}

// Same rule as snarkjs zkey_new: 2^power >= nConstraints + nPublic + 1.
function requiredPower(info) {
  const n = info.nConstraints + info.nPubInputs + info.nOutputs;
  return Math.max(1, n.toString(2).length);
}

async function localPtau(power, fresh, logger) {
  const dir = path.join(CACHE, "ptau");
  fs.mkdirSync(dir, { recursive: true });
  const final = path.join(dir, `pot${power}_dev_final.ptau`);
  if (fs.existsSync(final) && !fresh) {
    step(`reusing cached development ptau ${path.relative(ROOT, final)}`);
    return final;
  }
  const p0 = path.join(dir, `pot${power}_0000.ptau`);
  const p1 = path.join(dir, `pot${power}_0001.ptau`);
  const curve = await snarkjs.curves.getCurveFromName("bn128");
  step(`powers of tau: new accumulator bn128 power ${power}`);
  await snarkjs.powersOfTau.newAccumulator(curve, power, p0, logger);
  step("powers of tau: contribution (fixed entropy text, DEVELOPMENT ONLY)");
  await snarkjs.powersOfTau.contribute(p0, p1, "mzk dev contribution 1", ENTROPY, logger);
  step("powers of tau: prepare phase 2");
  await snarkjs.powersOfTau.preparePhase2(p1, final + ".tmp", logger);
  fs.renameSync(final + ".tmp", final);
  fs.rmSync(p0, { force: true });
  fs.rmSync(p1, { force: true });
  return final;
}

function sha256(file) {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

const UNIVERSAL_SYSTEMS = ["plonk", "fflonk"];

/**
 * PLONK and FFLONK keys for the built-in circuits, next to their Groth16 keys: the universal setup
 * needs no per-circuit contribution, so only the r1cs (compiled again; the committed wasm is checked
 * to be the one it compiles to) and a powers of tau.
 */
async function buildUniversal(opts, logger) {
  const names = opts.only ?? CIRCUITS;
  fs.mkdirSync(CACHE, { recursive: true });
  const ptau = opts.ptau ?? (await localPtau(opts.ptauPower, opts.fresh, logger));
  const ptauSource = opts.ptau
    ? { kind: "ceremony", file: path.basename(ptau), sha256: sha256(ptau) }
    : { kind: "local-development-only", power: opts.ptauPower };
  const manifest = readManifest();
  for (const name of names) {
    step(`compile ${name}`);
    const c = compile(name, path.join(CACHE, "compile", name));
    const outDir = path.join(BUILD, name);
    const committed = manifest.circuits[name]?.files?.[`${name}.wasm`]?.sha256;
    if (committed !== sha256(c.wasm)) throw new Error(`${name}: the wasm compiled now is not the committed one; rebuild all systems together`);
    const systems = {};
    for (const system of UNIVERSAL_SYSTEMS) {
      const zkeyOut = path.join(outDir, `${name}.${system}.zkey`);
      const vkeyOut = path.join(outDir, `verification_key.${system}.json`);
      step(`${system} setup ${name}`);
      const started = Date.now();
      let failed;
      try {
        const result = await snarkjs[system].setup(c.r1cs, ptau, zkeyOut, { ...logger, error: (m) => (failed = String(m)) });
        if (result === -1 && failed === undefined) failed = "setup refused";
      } catch (e) {
        failed = e.message;
      }
      if (failed !== undefined) {
        step(`  ${name}: no ${system} key (${failed})`);
        fs.rmSync(zkeyOut, { force: true });
        fs.rmSync(vkeyOut, { force: true });
        continue;
      }
      const vkey = await snarkjs.zKey.exportVerificationKey(zkeyOut, logger);
      fs.writeFileSync(vkeyOut, JSON.stringify(vkey, null, 1) + "\n");
      systems[system] = {
        setupMs: Date.now() - started,
        ptau: ptauSource,
        files: Object.fromEntries([zkeyOut, vkeyOut].map((f) => [path.basename(f), { bytes: fs.statSync(f).size, sha256: sha256(f) }])),
      };
      step(`  ${name}: ${system} key ${(fs.statSync(zkeyOut).size / 1024).toFixed(1)} KiB in ${Date.now() - started} ms`);
    }
    manifest.circuits[name] = { ...manifest.circuits[name], systems };
  }
  fs.writeFileSync(path.join(BUILD, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.universal) return buildUniversal(opts, makeLogger(opts.verbose));
  const logger = makeLogger(opts.verbose);
  const names = opts.only ?? CIRCUITS;
  fs.mkdirSync(CACHE, { recursive: true });

  // 1. compile
  const compiled = {};
  for (const name of names) {
    step(`compile ${name}`);
    const c = compile(name, path.join(CACHE, "compile", name));
    const info = await snarkjs.r1cs.info(c.r1cs, null);
    c.info = {
      constraints: info.nConstraints,
      wires: info.nVars,
      publicInputs: info.nPubInputs,
      privateInputs: info.nPrvInputs,
      outputs: info.nOutputs,
    };
    c.power = requiredPower(info);
    compiled[name] = c;
    step(`  ${name}: ${info.nConstraints} constraints, ${info.nVars} wires, needs 2^${c.power}`);
  }

  // 2. powers of tau
  const power = Math.max(...names.map((n) => compiled[n].power));
  let ptau;
  let ptauSource;
  if (opts.ptau) {
    ptau = opts.ptau;
    ptauSource = { kind: "ceremony", file: path.basename(ptau), sha256: sha256(ptau) };
    step(`using ceremony ptau ${ptau}`);
  } else {
    ptau = await localPtau(power, opts.fresh, logger);
    ptauSource = { kind: "local-development-only", power };
  }

  // 3. per-circuit Groth16 setup
  const manifest = readManifest();
  for (const name of names) {
    const c = compiled[name];
    const tmpDir = path.join(CACHE, "zkey");
    fs.mkdirSync(tmpDir, { recursive: true });
    const z0 = path.join(tmpDir, `${name}_0000.zkey`);
    const z1 = path.join(tmpDir, `${name}_0001.zkey`);

    step(`zkey new ${name}`);
    const res = await snarkjs.zKey.newZKey(c.r1cs, ptau, z0, logger);
    if (!res || typeof res !== "object") {
      throw new Error(`zKey.newZKey failed for ${name} (ptau too small or not prepared for phase 2?)`);
    }
    step(`zkey contribute ${name}`);
    await snarkjs.zKey.contribute(z0, z1, "mzk dev contribution 1", `${ENTROPY} / ${name}`, logger);
    step(`export verification key ${name}`);
    const vkey = await snarkjs.zKey.exportVerificationKey(z1, logger);

    const outDir = path.join(BUILD, name);
    fs.rmSync(outDir, { recursive: true, force: true });
    fs.mkdirSync(outDir, { recursive: true });
    const wasmOut = path.join(outDir, `${name}.wasm`);
    const zkeyOut = path.join(outDir, `${name}.zkey`);
    const vkeyOut = path.join(outDir, "verification_key.json");
    fs.copyFileSync(c.wasm, wasmOut);
    fs.copyFileSync(z1, zkeyOut);
    fs.writeFileSync(vkeyOut, JSON.stringify(vkey, null, 1) + "\n");
    fs.rmSync(z0, { force: true });
    fs.rmSync(z1, { force: true });

    manifest.circuits[name] = {
      ...c.info,
      nPublic: vkey.nPublic,
      domainPower: c.power,
      ptau: ptauSource,
      developmentOnly: !opts.ptau,
      files: Object.fromEntries(
        [wasmOut, zkeyOut, vkeyOut].map((f) => [
          path.basename(f),
          { bytes: fs.statSync(f).size, sha256: sha256(f) },
        ]),
      ),
    };
  }
  manifest.circom = compiled[names[0]].version ?? null;
  manifest.snarkjs = JSON.parse(
    fs.readFileSync(path.join(path.dirname(require.resolve("snarkjs")), "..", "package.json"), "utf8"),
  ).version;
  fs.writeFileSync(path.join(BUILD, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");

  // 4. sizes
  let total = 0;
  console.log("\nbuild/ artifacts:");
  for (const name of CIRCUITS) {
    const dir = path.join(BUILD, name);
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir).sort()) {
      const s = fs.statSync(path.join(dir, f)).size;
      total += s;
      console.log(`  ${`${name}/${f}`.padEnd(48)} ${(s / 1024).toFixed(1).padStart(10)} KiB`);
    }
  }
  console.log(`  ${"total".padEnd(48)} ${(total / 1024 / 1024).toFixed(2).padStart(10)} MiB`);
  step("done");
}

function readManifest() {
  const f = path.join(BUILD, "manifest.json");
  try {
    const m = JSON.parse(fs.readFileSync(f, "utf8"));
    if (m && typeof m.circuits === "object") return m;
  } catch {}
  return { circuits: {} };
}

try {
  await main();
} finally {
  // snarkjs/ffjavascript keep worker threads alive; stop them so node exits.
  await globalThis.curve_bn128?.terminate();
}
