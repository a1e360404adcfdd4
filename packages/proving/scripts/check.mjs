#!/usr/bin/env node
// End-to-end check of the built artifacts in build/:
//   node scripts/check.mjs [--runs 5] [--no-bench]
// For every circuit: a valid input proves and verifies, a tampered public
// signal does not verify, invalid witnesses are rejected (and the error text
// is printed), and warm groth16.fullProve time is measured.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as snarkjs from "snarkjs";
import { buildPoseidon } from "circomlibjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BUILD = path.join(ROOT, "build");
const catalog = JSON.parse(fs.readFileSync(path.join(ROOT, "src", "catalog.json"), "utf8"));
const R = BigInt(catalog.field_modulus);

const args = process.argv.slice(2);
const RUNS = Number(args.includes("--runs") ? args[args.indexOf("--runs") + 1] : 5);
const BENCH = !args.includes("--no-bench");

let passed = 0;
let failed = 0;
function ok(cond, msg) {
  if (cond) {
    passed++;
    console.log(`  ok    ${msg}`);
  } else {
    failed++;
    console.log(`  FAIL  ${msg}`);
  }
}

function artifacts(name) {
  const dir = path.join(BUILD, name);
  return {
    wasm: path.join(dir, `${name}.wasm`),
    zkey: path.join(dir, `${name}.zkey`),
    vkey: JSON.parse(fs.readFileSync(path.join(dir, "verification_key.json"), "utf8")),
  };
}

async function prove(name, input) {
  const a = artifacts(name);
  return snarkjs.groth16.fullProve(input, a.wasm, a.zkey);
}

async function expectReject(name, label, input) {
  try {
    await prove(name, input);
    ok(false, `${name}: ${label} is rejected (it was NOT)`);
  } catch (err) {
    const msg = String(err?.message ?? err);
    ok(true, `${name}: ${label} is rejected`);
    console.log(`        error: ${JSON.stringify(msg)}`);
  }
}

// deterministic pseudo-random field elements for test data
let seed = 0x1234567n;
function rnd() {
  seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
  return ((seed << 180n) ^ (seed << 90n) ^ seed) % R;
}

const poseidon = await buildPoseidon();
const H = (xs) => poseidon.F.toObject(poseidon(xs));

function merkleInput(depth = 20, leafIndex = 0b10110011100011110000) {
  const secret = rnd();
  let node = H([secret]);
  const path_elements = [];
  const path_indices = [];
  for (let i = 0; i < depth; i++) {
    const sib = rnd();
    const bit = (leafIndex >> i) & 1;
    path_elements.push(sib.toString());
    path_indices.push(bit);
    node = bit ? H([sib, node]) : H([node, sib]);
  }
  return { secret: secret.toString(), path_elements, path_indices, root: node.toString() };
}

const preimage = rnd();
const merkle = merkleInput();

// valid inputs and the public signals they must produce (catalog order)
const cases = {
  multiplier: {
    input: { a: "3", b: "11" },
    expected: { c: "33" },
    bad: [
      ["a = 1", { a: "1", b: "7" }],
      ["b = 1", { a: "7", b: "1" }],
    ],
  },
  range: {
    input: { value: "5000", min: "18", max: ((1n << 64n) - 1n).toString() },
    expected: { min: "18", max: ((1n << 64n) - 1n).toString() },
    bad: [
      ["value < min", { value: "17", min: "18", max: "100" }],
      ["value > max", { value: "101", min: "18", max: "100" }],
      ["value = 2^64 (not 64-bit)", { value: (1n << 64n).toString(), min: "0", max: "100" }],
      ["value = r - 1 (field wrap)", { value: (R - 1n).toString(), min: "0", max: "100" }],
      ["max = 2^64 + 5 (not 64-bit)", { value: "7", min: "0", max: ((1n << 64n) + 5n).toString() }],
    ],
  },
  hash_preimage: {
    input: { preimage: preimage.toString(), hash: H([preimage]).toString() },
    expected: { hash: H([preimage]).toString() },
    bad: [["wrong hash", { preimage: preimage.toString(), hash: (H([preimage]) + 1n).toString() }]],
  },
  merkle_membership: {
    input: merkle,
    expected: { root: merkle.root },
    bad: [
      ["wrong root", { ...merkle, root: ((BigInt(merkle.root) + 1n) % R).toString() }],
      ["wrong secret", { ...merkle, secret: "42" }],
      ["path_indices[3] = 2", { ...merkle, path_indices: merkle.path_indices.map((b, i) => (i === 3 ? 2 : b)) }],
    ],
  },
};

const timings = {};
try {
  for (const entry of catalog.circuits) {
    const name = entry.name;
    const c = cases[name];
    console.log(`\n== ${name}`);
    const { vkey } = artifacts(name);
    ok(vkey.nPublic === entry.public_signals.length, `${name}: vkey.nPublic = ${vkey.nPublic} matches catalog public_signals`);

    const { proof, publicSignals } = await prove(name, c.input);
    const want = entry.public_signals.map((n) => c.expected[n]);
    ok(
      JSON.stringify(publicSignals) === JSON.stringify(want),
      `${name}: publicSignals = [${entry.public_signals.join(", ")}] = ${JSON.stringify(publicSignals)}`,
    );
    ok((await snarkjs.groth16.verify(vkey, publicSignals, proof)) === true, `${name}: valid proof verifies`);

    for (let i = 0; i < publicSignals.length; i++) {
      const tampered = [...publicSignals];
      tampered[i] = ((BigInt(tampered[i]) + 1n) % R).toString();
      ok(
        (await snarkjs.groth16.verify(vkey, tampered, proof)) === false,
        `${name}: flipped public signal ${entry.public_signals[i]} does not verify`,
      );
    }
    const otherProof = { ...proof, pi_a: [...proof.pi_a] };
    otherProof.pi_a[0] = ((BigInt(proof.pi_a[0]) + 1n) % R).toString();
    let tamperedProofOk;
    try {
      tamperedProofOk = await snarkjs.groth16.verify(vkey, publicSignals, otherProof);
    } catch {
      tamperedProofOk = false;
    }
    ok(tamperedProofOk === false, `${name}: tampered proof does not verify`);

    for (const [label, input] of c.bad) await expectReject(name, label, input);

    if (BENCH) {
      await prove(name, c.input); // warm-up
      const ms = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        await prove(name, c.input);
        ms.push(performance.now() - t);
      }
      ms.sort((x, y) => x - y);
      timings[name] = {
        runs: RUNS,
        min: ms[0],
        median: ms[Math.floor(ms.length / 2)],
        mean: ms.reduce((s, x) => s + x, 0) / ms.length,
        max: ms[ms.length - 1],
      };
    }
  }

  if (BENCH) {
    console.log(`\nwarm groth16.fullProve (after 1 warm-up, ${RUNS} runs, curve kept loaded), ms:`);
    console.log(`  ${"circuit".padEnd(20)} ${"min".padStart(8)} ${"median".padStart(8)} ${"mean".padStart(8)} ${"max".padStart(8)}`);
    for (const [n, t] of Object.entries(timings)) {
      const f = (x) => x.toFixed(1).padStart(8);
      console.log(`  ${n.padEnd(20)} ${f(t.min)} ${f(t.median)} ${f(t.mean)} ${f(t.max)}`);
    }
  }
} catch (err) {
  failed++;
  console.error("unexpected error:", err);
} finally {
  await globalThis.curve_bn128?.terminate();
}

console.log(`\n${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
