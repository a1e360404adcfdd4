// Groth16 keys and proofs in snarkjs's JSON, made from scalars so the verifier's answer is known:
// for the native verifier's tests here and the verification thread's in packages/proving/test.
import { type F2, inv, mod, type Point, R } from "./reference.js"
import { g1, g2 } from "./zkeyFixture.js"

/** snarkjs's JSON form of points: decimal strings, projective z = 1 (z = 0 at infinity). */
export const g1Json = (p: Point<bigint>) => (p === null ? ["0", "1", "0"] : [p.x.toString(), p.y.toString(), "1"])
export const g2Json = (p: Point<F2>) =>
  p === null
    ? [["0", "0"], ["1", "0"], ["0", "0"]]
    : [[p.x[0].toString(), p.x[1].toString()], [p.y[0].toString(), p.y[1].toString()], ["1", "0"]]

/**
 * A verification key and a valid proof for it, from seven scalars [a, b, g, d, πa, πb, ic₀]: with
 * α = a·G1, β = b·G2, …, the Groth16 equation e(A, B) = e(α, β)·e(vk_x, γ)·e(C, δ) holds when
 * πa·πb = a·b + x·g + πc·d (mod r), x = ic₀ + Σ sᵢ·icᵢ₊₁, so πc is solved for. A scalar 0 is the
 * point at infinity (a = 0: α₁; πa = 0: π_A, and then e(−A, B) = 1 whatever B is; πc may solve
 * to 0). `ic` gives every IC scalar instead of ic₀'s multiples (0: an IC point at infinity, as for
 * a signal no constraint binds).
 */
export const groth16Instance = (seed: ReadonlyArray<bigint>, signals: ReadonlyArray<bigint>, options: { readonly ic?: ReadonlyArray<bigint> } = {}) => {
  const [a, b, g, d, pa, pb, ic0] = seed as [bigint, bigint, bigint, bigint, bigint, bigint, bigint]
  const ic = options.ic ?? [ic0, ...signals.map((_, i) => mod(ic0 * BigInt(i + 7) + 5n, R))]
  if (ic.length !== signals.length + 1) throw new Error("ic needs one scalar more than there are signals")
  const x = mod(ic.slice(1).reduce((acc, k, i) => acc + k * signals[i]!, ic[0]!), R)
  const pc = mod((pa * pb - a * b - x * g) * inv(d, R), R)
  const vkey = {
    protocol: "groth16" as const,
    curve: "bn128" as const,
    nPublic: signals.length,
    vk_alpha_1: g1Json(g1(a)),
    vk_beta_2: g2Json(g2(b)),
    vk_gamma_2: g2Json(g2(g)),
    vk_delta_2: g2Json(g2(d)),
    IC: ic.map((k) => g1Json(g1(k)))
  }
  const proof = { pi_a: g1Json(g1(pa)), pi_b: g2Json(g2(pb)), pi_c: g1Json(g1(pc)), protocol: "groth16", curve: "bn128" }
  return { vkey, proof, publicSignals: signals.map(String), pa, pb, pc }
}
