// Readers for the binary headers of circom/snarkjs files (r1cs, zkey, ptau), the circom `.sym`
// file, circom's error output, and the derivation of a circuit's inputs and public signals.
// Plain JS so the build job (a bare `node` child process) and the TypeScript side share it.
// @ts-check

/* global WebAssembly */
import { Buffer } from "node:buffer";
import fs from "node:fs";

/** bn128's base field prime q: a zkey or ptau for any other curve is refused. */
export const BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
/** bn128's scalar field r: the field every mzk circuit computes in. */
export const BN128_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const BLS12_381_Q = BigInt(
  "0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab",
);

export class FormatError extends Error {}

/**
 * Reads `len` bytes at `pos`, or throws a FormatError when they are not all in the file.
 * @typedef {{ readonly size: number; read(pos: number, len: number): Uint8Array }} SectionReader
 * @typedef {{ readonly start: number; readonly size: number }} Section
 * @typedef {Map<number, Array<Section>>} Sections
 * @typedef {{
 *   readonly curve: string
 *   readonly bn128: boolean
 *   readonly power: number
 *   readonly ceremonyPower: number
 *   readonly prepared: boolean
 * }} PtauHeader
 * @typedef {{
 *   readonly prime: bigint
 *   readonly nVars: number
 *   readonly nOutputs: number
 *   readonly nPubInputs: number
 *   readonly nPrvInputs: number
 *   readonly nLabels: number
 *   readonly nConstraints: number
 * }} R1csHeader
 * `nWitness` is the wires of the witness the key proves; PLONK/FFLONK: `nConstraints` counts
 * PLONK gates, not r1cs constraints.
 * @typedef {{
 *   readonly protocol: "groth16" | "plonk" | "fflonk"
 *   readonly curve: "bn128"
 *   readonly nWitness: number
 *   readonly nPublic: number
 *   readonly domainSize: number
 *   readonly nConstraints: number
 * }} ZkeyInfo
 * @typedef {{ readonly nOutputs: number; readonly nPubInputs: number; readonly nPrvInputs: number }} SignalCounts
 * @typedef {{ readonly name: string; readonly visibility: "public" | "private"; readonly kind: "field"; readonly dimensions: Array<number> }} DerivedInput
 * @typedef {{ label: number; wire: number; base: string; indices: Array<number>; name: string }} MainSignal
 * @typedef {{
 *   readonly witnessSize: number
 *   readonly inputSize: number
 *   readonly prime: bigint
 *   inputSignalSize(name: string): number
 * }} WitnessWasm
 */

/**
 * @param {Uint8Array} bytes
 * @param {number} offset
 * @param {number} length
 */
const le = (bytes, offset, length) => {
  let v = 0n;
  for (let i = length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[offset + i] ?? 0);
  return v;
};

/**
 * A reader over bytes in memory or a file descriptor, so a large ptau is never read whole.
 * @param {Uint8Array} bytes
 * @returns {SectionReader}
 */
export const bytesReader = (bytes) => ({
  size: bytes.length,
  read: (pos, len) => {
    if (pos < 0 || pos + len > bytes.length) throw new FormatError("truncated file");
    return bytes.subarray(pos, pos + len);
  },
});

/**
 * @param {number} fd
 * @returns {SectionReader}
 */
export const fileReader = (fd) => {
  const size = fs.fstatSync(fd).size;
  return {
    size,
    read: (pos, len) => {
      if (pos < 0 || pos + len > size) throw new FormatError("truncated file");
      const buf = Buffer.alloc(len);
      let got = 0;
      while (got < len) {
        const n = fs.readSync(fd, buf, got, len - got, pos + got);
        if (n === 0) throw new FormatError("truncated file");
        got += n;
      }
      return buf;
    },
  };
};

/**
 * The section table of an iden3 binary file (`magic`, version, sections of type + u64 size). Every
 * section must lie inside the file and the sections must fill it exactly: a truncated or padded
 * upload is caught here rather than deep inside snarkjs.
 * @param {SectionReader} reader
 * @param {string} magic
 * @returns {{ readonly version: number; readonly sections: Sections }}
 */
export function readSections(reader, magic) {
  if (reader.size < 12) throw new FormatError(`not a ${magic} file (too short)`);
  const head = reader.read(0, 12);
  const found = Buffer.from(head.subarray(0, 4)).toString("latin1");
  if (found !== magic) throw new FormatError(`not a ${magic} file`);
  const version = Number(le(head, 4, 4));
  const nSections = Number(le(head, 8, 4));
  /** @type {Sections} */
  const sections = new Map();
  let pos = 12;
  for (let i = 0; i < nSections; i++) {
    if (pos + 12 > reader.size) throw new FormatError(`${magic} file truncated in its section table`);
    const h = reader.read(pos, 12);
    const type = Number(le(h, 0, 4));
    const size = le(h, 4, 8);
    pos += 12;
    if (BigInt(pos) + size > BigInt(reader.size)) throw new FormatError(`${magic} file truncated (section ${type})`);
    const list = sections.get(type) ?? [];
    list.push({ start: pos, size: Number(size) });
    sections.set(type, list);
    pos += Number(size);
  }
  if (pos !== reader.size) throw new FormatError(`${magic} file has ${reader.size - pos} bytes after its last section`);
  return { version, sections };
}

/**
 * The one section of `type` ({ start, size }); a file without it, or with it twice, is refused.
 * @param {Sections} sections
 * @param {number} type
 * @param {string} magic
 * @returns {Section}
 */
export const only = (sections, type, magic) => {
  const list = sections.get(type);
  const [one] = list ?? [];
  if (list?.length !== 1 || one === undefined) throw new FormatError(`${magic} file has no single section ${type}`);
  return one;
};

/**
 * @param {Uint8Array} bytes
 * @returns {R1csHeader}
 */
export function readR1csHeader(bytes) {
  return readR1csHeaderFrom(bytesReader(bytes));
}

/**
 * The same from a file, reading only its section table and header (a large r1cs is never read whole).
 * @param {string} file
 * @returns {R1csHeader}
 */
export function readR1csHeaderFile(file) {
  const fd = fs.openSync(file, "r");
  try {
    return readR1csHeaderFrom(fileReader(fd));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * @param {SectionReader} reader
 * @returns {R1csHeader}
 */
function readR1csHeaderFrom(reader) {
  const { sections } = readSections(reader, "r1cs");
  const s = only(sections, 1, "r1cs");
  const h = reader.read(s.start, s.size);
  const n8 = Number(le(h, 0, 4));
  if (s.size < 4 + n8 + 28) throw new FormatError("r1cs header too short");
  let o = 4;
  const prime = le(h, o, n8);
  o += n8;
  const u32 = () => {
    const v = Number(le(h, o, 4));
    o += 4;
    return v;
  };
  const nVars = u32();
  const nOutputs = u32();
  const nPubInputs = u32();
  const nPrvInputs = u32();
  const nLabels = Number(le(h, o, 8));
  o += 8;
  const nConstraints = u32();
  return { prime, nVars, nOutputs, nPubInputs, nPrvInputs, nLabels, nConstraints };
}

/** @param {bigint} q */
export const curveName = (q) => (q === BN128_Q ? "bn128" : q === BLS12_381_Q ? "bls12-381" : `unknown (q = ${q})`);

/**
 * snarkjs's protocol ids (zkey_constants.js).
 * @type {Readonly<Record<number, ZkeyInfo["protocol"]>>}
 */
const ZKEY_PROTOCOLS = { 1: "groth16", 2: "plonk", 10: "fflonk" };

/**
 * The opening every zkey header shares (Groth16, PLONK, FFLONK): q and r with their byte sizes,
 * then `u32` reads the counts that follow; `offset()` is where the reader stands.
 * @param {SectionReader} reader
 * @param {Sections} sections
 */
function zkeyHeaderReader(reader, sections) {
  const s2 = only(sections, 2, "zkey");
  const h = reader.read(s2.start, s2.size);
  let o = 0;
  const u32 = () => {
    if (o + 4 > h.length) throw new FormatError("zkey header too short");
    const v = Number(le(h, o, 4));
    o += 4;
    return v;
  };
  /** @returns {[number, bigint]} */
  const field = () => {
    const n8 = u32();
    if (o + n8 > h.length) throw new FormatError("zkey header too short");
    const value = le(h, o, n8);
    o += n8;
    return [n8, value];
  };
  const [n8q, q] = field();
  const [n8r, r] = field();
  return { size: s2.size, n8q, q, n8r, r, u32, offset: () => o };
}

/**
 * A PLONK or FFLONK zkey's counts: their headers open as Groth16's does (q, r, wires, public
 * signals, domain size), then the number of additions and of (PLONK) constraints. The setup adds
 * a wire for each addition (a gate input that is a sum of signals) and counts it among the
 * header's wires; the prover computes those itself, so the witness holds the others
 * (snarkjs's `plonk prove` takes a witness of nVars − nAdditions). Their points are checked by the
 * build's proof of one witness, not one by one (the Groth16 checks do not apply).
 * @param {SectionReader} reader
 * @param {Sections} sections
 * @param {ZkeyInfo["protocol"]} system
 * @returns {ZkeyInfo}
 */
function readUniversalZkeyInfo(reader, sections, system) {
  const { q, r, u32 } = zkeyHeaderReader(reader, sections);
  if (q !== BN128_Q || r !== BN128_R) throw new FormatError(`the zkey is for curve ${curveName(q)}; mzk proves on bn128 only`);
  const nVars = u32();
  const nPublic = u32();
  const domainSize = u32();
  const nAdditions = u32();
  const nConstraints = u32();
  if (nAdditions > nVars) throw new FormatError("zkey header: more additions than wires");
  const nWitness = nVars - nAdditions;
  if (nPublic + 1 > nWitness) throw new FormatError("zkey header: more public signals than variables");
  if (domainSize === 0 || (domainSize & (domainSize - 1)) !== 0) throw new FormatError("zkey header: domain size is not a power of two");
  return { protocol: system, curve: "bn128", nWitness, nPublic, domainSize, nConstraints };
}

/**
 * A zkey's system and counts, `nWitness` the wires of the witness it proves (what the wasm
 * computes). A Groth16 key is checked for shape: the curve, and every section's size against the
 * header's counts (snarkjs's zkey layout); its number of r1cs constraints is recovered from the
 * coefficient section: snarkjs appends one constraint per public signal (and one for the
 * constant) after the circuit's own, so the highest constraint index is nConstraints + nPublic.
 * @param {Uint8Array} bytes
 * @returns {ZkeyInfo}
 */
export function readZkeyInfo(bytes) {
  const reader = bytesReader(bytes);
  const { sections } = readSections(reader, "zkey");
  const s1 = only(sections, 1, "zkey");
  if (s1.size !== 4) throw new FormatError("zkey protocol section has the wrong size");
  const protocol = Number(le(reader.read(s1.start, 4), 0, 4));
  const system = ZKEY_PROTOCOLS[protocol];
  if (system === undefined) throw new FormatError(`the zkey is for protocol ${protocol}, not groth16, plonk or fflonk`);
  if (system !== "groth16") return readUniversalZkeyInfo(reader, sections, system);
  const header = zkeyHeaderReader(reader, sections);
  const { n8q, q, n8r, r, u32 } = header;
  const nVars = u32();
  const nPublic = u32();
  const domainSize = u32();
  if (q !== BN128_Q || r !== BN128_R) {
    throw new FormatError(`the zkey is for curve ${curveName(q)}; mzk proves on bn128 only`);
  }
  const sG1 = 2 * n8q;
  const sG2 = 4 * n8q;
  // alpha1, beta1, beta2, gamma2, delta1, delta2 follow the counts
  if (header.size !== header.offset() + 3 * sG1 + 3 * sG2) throw new FormatError("zkey header has the wrong size");
  if (nPublic + 1 > nVars) throw new FormatError("zkey header: more public signals than variables");
  if (domainSize === 0 || (domainSize & (domainSize - 1)) !== 0) throw new FormatError("zkey header: domain size is not a power of two");
  /** @type {Record<number, number>} */
  const expected = {
    3: (nPublic + 1) * sG1,
    5: nVars * sG1,
    6: nVars * sG1,
    7: nVars * sG2,
    8: (nVars - nPublic - 1) * sG1,
    9: domainSize * sG1,
  };
  for (const [type, size] of Object.entries(expected)) {
    const s = only(sections, Number(type), "zkey");
    if (s.size !== size) throw new FormatError(`zkey section ${type} has ${s.size} bytes, expected ${size}`);
  }
  only(sections, 10, "zkey");
  const s4 = only(sections, 4, "zkey");
  const coeffs = reader.read(s4.start, s4.size);
  if (coeffs.length < 4) throw new FormatError("zkey coefficient section too short");
  const nCoeffs = Number(le(coeffs, 0, 4));
  const entry = 12 + n8r;
  if (coeffs.length !== 4 + nCoeffs * entry) throw new FormatError("zkey coefficient section has the wrong size");
  const view = new DataView(coeffs.buffer, coeffs.byteOffset, coeffs.byteLength);
  let maxConstraint = -1;
  for (let i = 0, p = 4; i < nCoeffs; i++, p += entry) {
    const c = view.getUint32(p + 4, true);
    if (c > maxConstraint) maxConstraint = c;
  }
  const nConstraints = maxConstraint - nPublic;
  if (nConstraints < 0 || nConstraints + nPublic + 1 > domainSize) throw new FormatError("zkey coefficients do not match its header");
  return { protocol: "groth16", curve: "bn128", nWitness: nVars, nPublic, domainSize, nConstraints };
}

/** R² mod r for R = 2^256: snarkjs stores each coefficient v of A and B as v·R² mod r. */
const COEFFICIENT_FACTOR = (1n << 512n) % BN128_R;

/**
 * @param {DataView} view
 * @param {number} offset
 */
const le256 = (view, offset) =>
  view.getBigUint64(offset, true) | (view.getBigUint64(offset + 8, true) << 64n) | (view.getBigUint64(offset + 16, true) << 128n) |
  (view.getBigUint64(offset + 24, true) << 192n);

/**
 * How a zkey's constraints (its A and B coefficients, section 4) differ from an r1cs's, or
 * undefined when they are the same: snarkjs's setup writes every A and B term of every r1cs
 * constraint, then one A term per public signal (and the constant) tying it to its own constraint.
 * Compared in the order snarkjs writes them, then, if that differs (another writer may order the
 * terms of a constraint otherwise), as sorted lists. The C terms are not in a zkey.
 * @param {Uint8Array} zkeyBytes
 * @param {Uint8Array} r1csBytes
 * @returns {string | undefined}
 */
export function constraintMismatch(zkeyBytes, r1csBytes) {
  const zkeyReader = bytesReader(zkeyBytes);
  const { sections: zkeySections } = readSections(zkeyReader, "zkey");
  const header = zkeyReader.read(only(zkeySections, 2, "zkey").start, 84);
  const nPublic = Number(le(header, 76, 4));
  const s4 = only(zkeySections, 4, "zkey");
  const coefficients = zkeyReader.read(s4.start, s4.size);
  const zkeyView = new DataView(coefficients.buffer, coefficients.byteOffset, coefficients.byteLength);
  const n = zkeyView.getUint32(0, true);
  /**
   * A term: matrix, constraint, signal, value.
   * @typedef {readonly [number, number, number, bigint]} Term
   */
  /**
   * @param {number} i
   * @returns {Term}
   */
  const zkeyTerm = (i) => {
    const p = 4 + i * 44;
    return [zkeyView.getUint32(p, true), zkeyView.getUint32(p + 4, true), zkeyView.getUint32(p + 8, true), le256(zkeyView, p + 12)];
  };

  const { nConstraints } = readR1csHeader(r1csBytes);
  const r1csReader = bytesReader(r1csBytes);
  const s2 = only(readSections(r1csReader, "r1cs").sections, 2, "r1cs");
  const constraints = r1csReader.read(s2.start, s2.size);
  const r1csView = new DataView(constraints.buffer, constraints.byteOffset, constraints.byteLength);
  // The r1cs's A and B terms as snarkjs writes them; without values, only counted.
  /**
   * @param {boolean} [withValues]
   * @returns {Generator<Term | undefined>}
   */
  function* r1csTerms(withValues = true) {
    let o = 0;
    for (let c = 0; c < nConstraints; c++) {
      for (let matrix = 0; matrix < 3; matrix++) {
        if (o + 4 > constraints.length) throw new FormatError("the r1cs's constraints section is truncated");
        const count = r1csView.getUint32(o, true);
        o += 4;
        if (o + count * 36 > constraints.length) throw new FormatError("the r1cs's constraints section is truncated");
        for (let k = 0; k < count; k++, o += 36) {
          if (matrix < 2) {
            yield withValues ? [matrix, c, r1csView.getUint32(o, true), (le256(r1csView, o + 4) * COEFFICIENT_FACTOR) % BN128_R] : undefined;
          }
        }
      }
    }
    for (let signal = 0; signal <= nPublic; signal++) yield [0, nConstraints + signal, signal, COEFFICIENT_FACTOR];
  }
  let expectedCount = 0;
  for (const _ of r1csTerms(false)) expectedCount++;
  if (expectedCount !== n) return `the zkey has ${n} A and B terms, the r1cs ${expectedCount}`;

  /**
   * @param {Term} a
   * @param {Term} b
   */
  const same = (a, b) => a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3];
  /**
   * @param {Term} a
   * @param {Term} b
   */
  const order = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0);
  // The first of two differing terms, as the constraint (and matrix) it belongs to.
  /**
   * @param {Term} a
   * @param {Term} b
   */
  const where = (a, b) => {
    const [matrix, c] = order(b, a) < 0 ? b : a;
    return `constraint ${c}${c < nConstraints ? "" : ` (public signal ${c - nConstraints})`}, matrix ${matrix === 0 ? "A" : "B"}, differs`;
  };
  let i = 0;
  for (const term of r1csTerms()) {
    if (term === undefined || !same(zkeyTerm(i), term)) break;
    i++;
  }
  if (i === n) return undefined;
  const expected = /** @type {Term[]} */ ([...r1csTerms()]).sort(order);
  const actual = Array.from({ length: n }, (_, k) => zkeyTerm(k)).sort(order);
  for (let k = 0; k < n; k++) {
    const [a, e] = [actual[k], expected[k]];
    if (a !== undefined && e !== undefined && !same(e, a)) return where(a, e);
  }
  return undefined;
}

/**
 * A powers-of-tau file's curve and power, and whether it is prepared for phase 2.
 * @param {string} path
 * @returns {PtauHeader}
 */
export function readPtauHeader(path) {
  let fd;
  try {
    fd = fs.openSync(path, "r");
  } catch (e) {
    const error = /** @type {NodeJS.ErrnoException} */ (e);
    throw new FormatError(`cannot open the powers of tau file ${path}: ${error.code ?? error.message}`);
  }
  try {
    const reader = fileReader(fd);
    const { sections } = readSections(reader, "ptau");
    const s = only(sections, 1, "ptau");
    const h = reader.read(s.start, Math.min(s.size, 4 + 64 + 8));
    const n8 = Number(le(h, 0, 4));
    if (h.length < 4 + n8 + 8) throw new FormatError("ptau header too short");
    const q = le(h, 4, n8);
    const power = Number(le(h, 4 + n8, 4));
    const ceremonyPower = Number(le(h, 8 + n8, 4));
    return { curve: curveName(q), bn128: q === BN128_Q, power, ceremonyPower, prepared: sections.has(12) };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The power of tau snarkjs's newZKey demands: the domain must hold the constraints plus one per
 * public signal plus one, i.e. the bit length of nConstraints + nPublic (its `log2(n) + 1`).
 * @param {number} nConstraints
 * @param {number} nPublic
 */
export const requiredPower = (nConstraints, nPublic) => Math.max(1, (nConstraints + nPublic).toString(2).length);

/**
 * `main`'s own signals in a circom `.sym` file (`label,wire,component,name`): `main.x`, `main.x[1][0]`;
 * signals of sub-components (`main.c.x`) are skipped. `wire` is -1 for a signal the optimiser
 * took out of the witness, which --O2 does even to private inputs nothing constrains.
 * @param {string} symText
 * @returns {Array<MainSignal>}
 */
export function mainSignals(symText) {
  /** @type {Array<MainSignal>} */
  const out = [];
  for (const raw of symText.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const parts = line.split(",");
    if (parts.length < 4) throw new FormatError("the sym file is not a circom symbol file");
    const label = Number(parts[0]);
    const wire = Number(parts[1]);
    const name = parts.slice(3).join(",");
    if (!Number.isInteger(label) || !Number.isInteger(wire)) throw new FormatError("the sym file is not a circom symbol file");
    const m = /^main\.([A-Za-z_$][A-Za-z0-9_$]*)((?:\[\d+\])*)$/.exec(name);
    if (!m || m[1] === undefined || label < 1) continue;
    const indices = [...(m[2] ?? "").matchAll(/\[(\d+)\]/g)].map((x) => Number(x[1]));
    out.push({ label, wire, base: m[1], indices, name: name.slice(5) });
  }
  return out;
}

/**
 * Inputs and public signals from the layout circom gives `main`'s signals: labels 1.. are the
 * outputs, the public inputs and the private inputs, in that order, arrays in row-major order
 * (the same order as their witness wires, where the optimiser kept them; public signals always
 * keep theirs, and their order is the order snarkjs gives public signals in).
 * Every one of those labels must name exactly one signal of `main` in the sym file.
 * @param {string} symText
 * @param {SignalCounts} counts
 * @returns {{ readonly inputs: ReadonlyArray<DerivedInput>; readonly publicSignals: ReadonlyArray<string> }}
 */
export function deriveSignals(symText, counts) {
  const { nOutputs, nPubInputs, nPrvInputs } = counts;
  for (const n of [nOutputs, nPubInputs, nPrvInputs]) {
    if (!Number.isInteger(n) || n < 0) throw new FormatError("impossible signal counts");
  }
  const nIo = nOutputs + nPubInputs + nPrvInputs;
  const nPublic = nOutputs + nPubInputs;
  /** @type {Array<MainSignal | undefined>} */
  const byLabel = new Array(nIo + 1);
  for (const s of mainSignals(symText)) {
    if (s.label > nIo) continue;
    if (byLabel[s.label] !== undefined) throw new FormatError(`the sym file names label ${s.label} twice`);
    if (s.label <= nPublic && s.wire !== s.label) {
      throw new FormatError(`public signal ${s.name} is not on wire ${s.label} of the witness`);
    }
    byLabel[s.label] = s;
  }
  /** @typedef {{ base: string; role: "output" | "public" | "private"; elements: Array<MainSignal> }} Group */
  /** @type {Array<Group>} */
  const groups = [];
  /** @type {Map<string, Group>} */
  const seen = new Map();
  for (let w = 1; w <= nIo; w++) {
    const s = byLabel[w];
    if (s === undefined) throw new FormatError(`the sym file names no signal of main for label ${w}`);
    const role = w <= nOutputs ? "output" : w <= nOutputs + nPubInputs ? "public" : "private";
    let g = seen.get(s.base);
    if (g === undefined) {
      g = { base: s.base, role, elements: [] };
      seen.set(s.base, g);
      groups.push(g);
    } else if (g.role !== role || groups[groups.length - 1] !== g) {
      throw new FormatError(`the sym file splits signal ${s.base} across the signal layout`);
    }
    g.elements.push(s);
  }
  /** @type {Array<DerivedInput>} */
  const inputs = [];
  for (const g of groups) {
    const rank = g.elements[0]?.indices.length ?? 0;
    /** @type {Array<number>} */
    const dims = new Array(rank).fill(0);
    for (const e of g.elements) {
      if (e.indices.length !== rank) throw new FormatError(`signal ${g.base} has elements of different ranks`);
      e.indices.forEach((i, k) => (dims[k] = Math.max(dims[k] ?? 0, i + 1)));
    }
    if (dims.reduce((a, b) => a * b, 1) !== g.elements.length) {
      throw new FormatError(`signal ${g.base} does not fill its array`);
    }
    if (g.role !== "output") inputs.push({ name: g.base, visibility: g.role, kind: "field", dimensions: dims });
  }
  /** @type {Array<string>} */
  const publicSignals = [];
  // Every label up to nIo was found above.
  for (let w = 1; w <= nPublic; w++) publicSignals.push(/** @type {MainSignal} */ (byLabel[w]).name);
  return { inputs, publicSignals };
}

/**
 * circom's FNV-1a 64 hash of a signal name, as the witness calculator looks inputs up.
 * @param {string} name
 */
export function fnv64(name) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < name.length; i++) {
    h ^= BigInt(name.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

/**
 * A circom witness calculator's facts, read from its exports without computing a witness: witness
 * size, input count, field prime, and a lookup of input signals' sizes by name (0 or -1 when not an input).
 * @param {Uint8Array} bytes
 * @returns {Promise<WitnessWasm>}
 */
export async function inspectWitnessWasm(bytes) {
  let module;
  try {
    module = await WebAssembly.compile(bytes);
  } catch (e) {
    throw new FormatError(`the wasm does not compile: ${e instanceof Error ? e.message : String(e)}`);
  }
  /** @type {Record<string, Record<string, () => number>>} */
  const imports = {};
  for (const d of WebAssembly.Module.imports(module)) {
    if (d.kind !== "function") throw new FormatError("the wasm is not a circom witness calculator (unexpected import)");
    (imports[d.module] ??= {})[d.name] = () => 0;
  }
  let exports;
  try {
    exports = (await WebAssembly.instantiate(module, imports)).exports;
  } catch (e) {
    throw new FormatError(`the wasm does not instantiate: ${e instanceof Error ? e.message : String(e)}`);
  }
  const calculator = /** @type {Record<string, (...args: number[]) => number>} */ (exports);
  for (const name of ["getWitnessSize", "getInputSize", "getInputSignalSize", "getFieldNumLen32", "getRawPrime", "readSharedRWMemory"]) {
    if (typeof calculator[name] !== "function") throw new FormatError(`the wasm is not a circom 2 witness calculator (no ${name})`);
  }
  const call = (/** @type {string} */ name, /** @type {number[]} */ ...args) => /** @type {(...args: number[]) => number} */ (calculator[name])(...args);
  const n32 = call("getFieldNumLen32");
  call("getRawPrime");
  let prime = 0n;
  for (let i = n32 - 1; i >= 0; i--) prime = (prime << 32n) | BigInt(call("readSharedRWMemory", i) >>> 0);
  return {
    witnessSize: call("getWitnessSize"),
    inputSize: call("getInputSize"),
    prime,
    inputSignalSize: (name) => {
      const h = fnv64(name);
      return call("getInputSignalSize", Number(h >> 32n), Number(h & 0xffffffffn));
    },
  };
}

/**
 * Outputs and public/private input counts of a prebuilt circuit that came without its r1cs: the
 * zkey gives the public count, the witness calculator tells inputs from outputs.
 * @param {string} symText
 * @param {number} nPublic
 * @param {Pick<WitnessWasm, "inputSize" | "inputSignalSize">} wasm
 * @returns {SignalCounts}
 */
export function countsFromWasm(symText, nPublic, wasm) {
  let nOutputs = 0;
  let nPubInputs = 0;
  for (const s of mainSignals(symText)) {
    if (s.label > nPublic) continue;
    // circom's lookup answers 0, not -1, for a name that is not an input
    if (wasm.inputSignalSize(s.base) > 0) nPubInputs++;
    else nOutputs++;
  }
  if (nOutputs + nPubInputs !== nPublic) {
    throw new FormatError(`the sym file names ${nOutputs + nPubInputs} public signals, the zkey has ${nPublic}`);
  }
  if (wasm.inputSize < nPubInputs) throw new FormatError(`the sym file names ${nPubInputs} public inputs, the wasm takes ${wasm.inputSize} inputs`);
  return { nOutputs, nPubInputs, nPrvInputs: wasm.inputSize - nPubInputs };
}

// eslint-disable-next-line no-control-regex -- circom colours its output with ANSI escapes
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * circom's diagnostics (`error[P1008]: Missing semicolon` then `┌─ "src/main.circom":6:18`) as a
 * message and the first error's file and line, with the build directory's prefix taken off so the
 * file is the upload's own path.
 * @param {string} output
 * @param {ReadonlyArray<string>} prefixes
 * @returns {{ readonly message: string; readonly file: string | undefined; readonly line: number | undefined }}
 */
export function parseCircomErrors(output, prefixes) {
  const text = output.replace(ANSI, "").replace(/\r/g, "");
  /** @param {string} file */
  const strip = (file) => {
    for (const p of prefixes) if (file.startsWith(p)) return file.slice(p.length);
    return file;
  };
  const lines = text.split("\n");
  /** @type {Array<Array<string>>} */
  const blocks = [];
  /** @type {Array<string> | null} */
  let current = null;
  for (const line of lines) {
    if (/^error(\[[A-Z0-9]+\])?:/.test(line)) {
      current = [line];
      blocks.push(current);
    } else if (/^(warning(\[[A-Z0-9]+\])?:|previous errors were found|Everything went okay)/.test(line)) {
      current = null;
    } else if (current !== null) {
      current.push(line);
    }
  }
  /** @type {string | undefined} */
  let file;
  /** @type {number | undefined} */
  let line;
  for (const b of blocks) {
    for (const l of b) {
      const m = /"([^"]+)":(\d+):(\d+)/.exec(l);
      if (m && m[1] !== undefined) {
        file = strip(m[1]);
        line = Number(m[2]);
        break;
      }
    }
    if (file !== undefined) break;
  }
  const body = blocks.map((b) => b.join("\n").trimEnd()).join("\n\n") || text.trim();
  let message = body.replace(/"([^"]+)":(\d+)/g, (_, /** @type {string} */ f, /** @type {string} */ l) => `"${strip(f)}":${l}`);
  if (message.length > 4000) message = `${message.slice(0, 4000)}…`;
  return { message: message === "" ? "circom failed without a message" : message, file, line };
}
