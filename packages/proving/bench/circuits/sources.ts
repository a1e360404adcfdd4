// circom sources of the benchmark circuits, sized to fill a Groth16 domain of 2^power.
//
// Two kinds, as real circuits are: hash-heavy (a chain of circomlib Poseidon(2), field
// arithmetic only) and bit-heavy (circomlib SHA-256 of N bytes, every bit a wire).
// The per-unit constraint costs below were measured with circom2 --O2 (calibrate.ts prints
// them again); a circuit fits 2^power when constraints + public signals + 1 ≤ 2^power.

export type BenchKind = "poseidon" | "sha256" | "mimc"
/** The kinds large.ts runs by default; "mimc" is asked for by name (--kinds mimc). */
export const BENCH_KINDS: ReadonlyArray<BenchKind> = ["poseidon", "sha256"]

/** Constraints of one round of the MiMC-style chain: (x + k + c)^5 in three multiplications. */
export const MIMC_ROUND_CONSTRAINTS = 3

/** Constraints of one Poseidon(2) in the chain (circomlib, --O2). */
export const POSEIDON2_CONSTRAINTS = 240
// SHA-256 of N bytes in B blocks costs about 29,224·B + 23.9·N − 287 constraints (--O2 folds
// the padding's known bits, so a byte of input costs more than its Num2Bits(8)): measured
// 28,961 (1 byte), 59,499 (56 bytes) and 61,005 (119 bytes).
const shaConstraints = (blocks: number, bytes: number) => 29_224 * blocks + 24 * bytes - 287

// The chain is composed of sub-templates of this many hashes, which keeps each template small; it
// does not get circom2 (WebAssembly, 4 GiB at most) through 2^20 all the same: it ran out of memory
// after 302 s of CPU on the 4,369-hash chain (docs/performance.md, Large circuits).
const CHAIN_SEGMENT = 64

export interface BenchCircuit {
  readonly kind: BenchKind
  readonly power: number
  /** Hashes (poseidon) or input bytes (sha256). */
  readonly units: number
  readonly name: string
  readonly source: string
  /** circom2's optimisation level (--O2 unless named). */
  readonly optimisation?: "O1" | "O2"
  /** One input the circuit accepts, as a proof's `inputs` object. */
  readonly sampleInputs: (random: () => bigint) => Record<string, unknown>
}

const SHA256_PADDING_BITS = 65

const shaBlocks = (bytes: number) => Math.ceil((bytes * 8 + SHA256_PADDING_BITS) / 512)

/** Units (hashes or bytes) that fill 2^power, leaving room for public signals and the r1cs's one. */
export const unitsFor = (kind: BenchKind, power: number): number => {
  // The SHA-256 count is a fit, so it keeps a margin.
  const room = 2 ** power - (kind === "sha256" ? 2 ** (power - 8) : 8)
  if (kind === "poseidon") return Math.floor(room / POSEIDON2_CONSTRAINTS)
  if (kind === "mimc") return Math.floor(room / MIMC_ROUND_CONSTRAINTS)
  // Whole blocks: padding can take up to 64 bytes of the last one.
  let bytes = 1
  for (let blocks = 1; ; blocks++) {
    const maxBytes = Math.floor((blocks * 512 - SHA256_PADDING_BITS) / 8)
    if (shaConstraints(blocks, maxBytes) > room) return bytes
    bytes = maxBytes
  }
}

const poseidonSource = (hashes: number) => {
  const segments = Math.floor(hashes / CHAIN_SEGMENT)
  const rest = hashes % CHAIN_SEGMENT
  return `pragma circom 2.0.0;
include "circomlib/circuits/poseidon.circom";

template Segment(n) {
  signal input in;
  signal input k;
  signal output out;
  component h[n];
  for (var i = 0; i < n; i++) {
    h[i] = Poseidon(2);
    if (i == 0) { h[i].inputs[0] <== in; } else { h[i].inputs[0] <== h[i - 1].out; }
    h[i].inputs[1] <== k;
  }
  out <== h[n - 1].out;
}

template Main(segments, segmentSize, rest) {
  signal input in;
  signal input k;
  signal output out;
  var parts = segments + (rest > 0 ? 1 : 0);
  component s[parts];
  for (var i = 0; i < parts; i++) {
    s[i] = Segment(i < segments ? segmentSize : rest);
    if (i == 0) { s[i].in <== in; } else { s[i].in <== s[i - 1].out; }
    s[i].k <== k;
  }
  out <== s[parts - 1].out;
}

component main = Main(${segments}, ${CHAIN_SEGMENT}, ${rest});
`
}

const sha256Source = (bytes: number) => `pragma circom 2.0.0;
include "circomlib/circuits/sha256/sha256.circom";
include "circomlib/circuits/bitify.circom";

template Main(nBytes) {
  signal input in[nBytes];
  signal output hash[2];
  component bytes[nBytes];
  component sha = Sha256(nBytes * 8);
  for (var i = 0; i < nBytes; i++) {
    bytes[i] = Num2Bits(8);
    bytes[i].in <== in[i];
    for (var j = 0; j < 8; j++) sha.in[i * 8 + j] <== bytes[i].out[7 - j];
  }
  component half[2];
  for (var h = 0; h < 2; h++) {
    half[h] = Bits2Num(128);
    for (var j = 0; j < 128; j++) half[h].in[j] <== sha.out[h * 128 + 127 - j];
    hash[h] <== half[h].out;
  }
}

component main = Main(${bytes});
`

// A MiMC-style round function, x ← (x + k + c_i)^5, chained: every constraint a multiplication of
// full-size values (as a hash chain's are), with the least compiler state per constraint. circom2
// runs out of its 4 GiB of WebAssembly memory on the 2^20 Poseidon chain; this fills 2^20 in one
// template of three signal arrays. The constants are arbitrary: it is a load for the prover, not a
// hash anyone should use.
const mimcSource = (rounds: number) => `pragma circom 2.0.0;

template Chain(n) {
  signal input in;
  signal input k;
  signal output out;
  signal x[n + 1];
  signal sq[n];
  signal qu[n];
  x[0] <== in;
  for (var i = 0; i < n; i++) {
    sq[i] <== (x[i] + k + i * 7919 + 1) * (x[i] + k + i * 7919 + 1);
    qu[i] <== sq[i] * sq[i];
    x[i + 1] <== qu[i] * (x[i] + k + i * 7919 + 1);
  }
  out <== x[n];
}

component main = Chain(${rounds});
`

/** The circuit of a kind that fills 2^power (or `units` hashes/bytes, for calibration). */
export const benchCircuit = (kind: BenchKind, power: number, units = unitsFor(kind, power)): BenchCircuit => {
  const name = `${kind}_${power}`
  if (kind === "mimc")
    return {
      kind,
      power,
      units,
      name,
      source: mimcSource(units),
      // Every constraint is already a product: --O2's linear simplification has nothing to remove
      // and only adds state.
      optimisation: "O1",
      sampleInputs: (random) => ({ in: random().toString(), k: random().toString() }),
    }
  if (kind === "poseidon")
    return {
      kind,
      power,
      units,
      name,
      source: poseidonSource(units),
      sampleInputs: (random) => ({ in: random().toString(), k: random().toString() }),
    }
  return {
    kind,
    power,
    units,
    name,
    source: sha256Source(units),
    sampleInputs: (random) => ({ in: Array.from({ length: units }, () => (random() & 0xffn).toString()) }),
  }
}

export const shaBlocksOf = shaBlocks
