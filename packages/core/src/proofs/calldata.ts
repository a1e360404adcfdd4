import { keccak_256 } from "@noble/hashes/sha3.js"
import { Data, Either } from "effect"
import type { Groth16Proof, SnarkjsProof } from "./proof.js"

/** bn128's base field prime q: every proof coordinate is below it. */
const BN128_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n
/** bn128's scalar field r: every public signal is below it. */
const BN128_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n

type Pair = readonly [string, string]

/**
 * A call of snarkjs's Solidity verifier for the proof's system: its signature, its arguments
 * (decimal strings) and the ABI-encoded call. Groth16: `(a, b, c, publicSignals)`; PLONK and
 * FFLONK: `(proof, publicSignals)`, the proof as the 24 words snarkjs's verifiers read.
 */
export interface SolidityCalldata {
  readonly function: string
  readonly arguments:
    | readonly [a: Pair, b: readonly [Pair, Pair], c: Pair, publicSignals: ReadonlyArray<string>]
    | readonly [proof: ReadonlyArray<string>, publicSignals: ReadonlyArray<string>]
    /** UltraHonk: the proof bytes and the public inputs as 32-byte words, 0x-hex as `cast` and ethers take them. */
    | readonly [proof: string, publicInputs: ReadonlyArray<string>]
  /** `0x` + the 4-byte selector + the static ABI words, ready to send as a transaction's or `eth_call`'s data. */
  readonly calldata: string
}

/** Why a proof cannot be turned into calldata (not a bn128 Groth16 proof as snarkjs writes it). */
export class CalldataError extends Data.TaggedError("CalldataError")<{ readonly message: string }> {}

function refuse(message: string): never {
  throw new CalldataError({ message })
}

const canonical = (value: string | undefined, bound: bigint, what: string): bigint => {
  if (value === undefined || !/^(0|[1-9][0-9]*)$/.test(value)) refuse(`${what} is not a decimal integer`)
  const n = BigInt(value)
  if (n >= bound) refuse(`${what} is not below the field modulus`)
  return n
}

const word = (n: bigint): string => n.toString(16).padStart(64, "0")

const hex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

/** The 4-byte function selector of a Solidity signature (first bytes of its keccak-256), as hex without `0x`. */
export const functionSelector = (signature: string): string => hex(keccak_256(new TextEncoder().encode(signature))).slice(0, 8)

/**
 * The `verifyProof` call for a Groth16 proof, as snarkjs's `exportSolidityCallData` lays it out.
 * The EVM's pairing precompile (EIP-197) takes an Fq2 element as (imaginary, real) while snarkjs
 * writes (real, imaginary), so each of b's coordinate pairs is swapped. The signature's array
 * length is the number of public signals, so a verifier for another circuit rejects the selector.
 */
export const groth16Calldata = (
  proof: Groth16Proof,
  publicSignals: ReadonlyArray<string>
): Either.Either<SolidityCalldata, CalldataError> =>
  Either.try({
    try: () => encode(proof, publicSignals),
    catch: (e) => e instanceof CalldataError ? e : new CalldataError({ message: String(e) })
  })

const encode = (proof: Groth16Proof, publicSignals: ReadonlyArray<string>): SolidityCalldata => {
  if (proof.protocol !== "groth16") refuse(`the proof is ${proof.protocol}, not groth16`)
  if (proof.curve !== "bn128") refuse(`the proof is on ${proof.curve}, not bn128`)
  const g1 = (point: ReadonlyArray<string>, what: string) =>
    [canonical(point[0], BN128_Q, `${what}[0]`), canonical(point[1], BN128_Q, `${what}[1]`)] as const
  const b = proof.pi_b
  const fq2 = (i: number) => {
    const pair = b[i]
    if (pair === undefined) return refuse(`pi_b[${i}] is missing`)
    return [canonical(pair[1], BN128_Q, `pi_b[${i}][1]`), canonical(pair[0], BN128_Q, `pi_b[${i}][0]`)] as const
  }
  const a = g1(proof.pi_a, "pi_a")
  const bSwapped = [fq2(0), fq2(1)] as const
  const c = g1(proof.pi_c, "pi_c")
  const signals = publicSignals.map((s, i) => canonical(s, BN128_R, `public_signals[${i}]`))

  const signature = `verifyProof(uint256[2],uint256[2][2],uint256[2],uint256[${signals.length}])`
  const selector = functionSelector(signature)
  // Every parameter is a fixed-size array of uint256, so the ABI encoding is just the words in order.
  const words = [...a, ...bSwapped[0], ...bSwapped[1], ...c, ...signals]
  const decimal = (pair: readonly [bigint, bigint]): Pair => [pair[0].toString(), pair[1].toString()]
  return {
    function: signature,
    arguments: [decimal(a), [decimal(bSwapped[0]), decimal(bSwapped[1])], decimal(c), signals.map((s) => s.toString())],
    calldata: `0x${selector}${words.map(word).join("")}`
  }
}

const field = (value: unknown, bound: bigint, what: string): bigint =>
  canonical(typeof value === "string" ? value : undefined, bound, what)

const at = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined

/**
 * The words of a PLONK or FFLONK proof in the order snarkjs's `exportSolidityCallData` writes them
 * (and its verifier templates read them): G1 points as (x, y), then the evaluations.
 */
const universalWords = (proof: SnarkjsProof): ReadonlyArray<bigint> => {
  const point = (p: unknown, what: string) => [field(at(p, "0"), BN128_Q, `${what}[0]`), field(at(p, "1"), BN128_Q, `${what}[1]`)]
  if (proof.protocol === "plonk") {
    const points = ["A", "B", "C", "Z", "T1", "T2", "T3", "Wxi", "Wxiw"].flatMap((name) => point(proof[name], name))
    const evals = ["eval_a", "eval_b", "eval_c", "eval_s1", "eval_s2", "eval_zw"].map((name) => field(proof[name], BN128_R, name))
    return [...points, ...evals]
  }
  const polynomials = proof["polynomials"]
  const evaluations = proof["evaluations"]
  const points = ["C1", "C2", "W1", "W2"].flatMap((name) => point(at(polynomials, name), `polynomials.${name}`))
  const evals = ["ql", "qr", "qm", "qo", "qc", "s1", "s2", "s3", "a", "b", "c", "z", "zw", "t1w", "t2w", "inv"]
    .map((name) => field(at(evaluations, name), BN128_R, `evaluations.${name}`))
  return [...points, ...evals]
}

const encodeUniversal = (proof: SnarkjsProof, publicSignals: ReadonlyArray<string>): SolidityCalldata => {
  if (proof.curve !== "bn128") refuse(`the proof is on ${proof.curve}, not bn128`)
  const words = universalWords(proof)
  const signals = publicSignals.map((s, i) => canonical(s, BN128_R, `public_signals[${i}]`))
  // FFLONK's template declares at least one public signal (uint256[max(nPublic, 1)]).
  const padded = proof.protocol === "fflonk" && signals.length === 0 ? [0n] : signals
  const signature = proof.protocol === "plonk"
    ? `verifyProof(uint256[24],uint256[${padded.length}])`
    : `verifyProof(bytes32[24],uint256[${padded.length}])`
  return {
    function: signature,
    arguments: [words.map((w) => w.toString()), padded.map((s) => s.toString())],
    calldata: `0x${functionSelector(signature)}${[...words, ...padded].map(word).join("")}`
  }
}

/**
 * The `verify(bytes proof, bytes32[] publicInputs)` call of bb.js's HonkVerifier: both arguments
 * are dynamic, so the head holds their offsets, then the proof's length and bytes (padded to a
 * word), then the inputs' count and words.
 */
const encodeUltraHonk = (proof: SnarkjsProof, publicSignals: ReadonlyArray<string>): SolidityCalldata => {
  const bytes = proof["proof"]
  if (typeof bytes !== "string" || !/^0x([0-9a-fA-F]{64})+$/.test(bytes)) refuse("proof is not whole 32-byte words of 0x-hex")
  const data = bytes.slice(2).toLowerCase()
  const signals = publicSignals.map((s, i) => canonical(s, BN128_R, `public_signals[${i}]`))
  const signature = "verify(bytes,bytes32[])"
  const proofLength = data.length / 2
  const words = [64n, BigInt(64 + 32 + proofLength), BigInt(proofLength)].map(word).join("") + data +
    [BigInt(signals.length), ...signals].map(word).join("")
  return {
    function: signature,
    arguments: [`0x${data}`, signals.map((s) => `0x${word(s)}`)],
    calldata: `0x${functionSelector(signature)}${words}`
  }
}

/** The verifier call for a proof of any system mzk proves (groth16, plonk, fflonk with snarkjs; ultra_honk with bb.js). */
export const proofCalldata = (
  proof: SnarkjsProof,
  publicSignals: ReadonlyArray<string>
): Either.Either<SolidityCalldata, CalldataError> =>
  Either.try({
    try: () => {
      switch (proof.protocol) {
        case "groth16":
          return encode(proof as unknown as Groth16Proof, publicSignals)
        case "plonk":
        case "fflonk":
          return encodeUniversal(proof, publicSignals)
        case "ultra_honk":
          return encodeUltraHonk(proof, publicSignals)
        default:
          return refuse(`the proof's protocol ${JSON.stringify(proof.protocol)} has no Solidity verifier here`)
      }
    },
    catch: (e) => e instanceof CalldataError ? e : new CalldataError({ message: String(e) })
  })
