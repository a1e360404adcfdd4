// The Groth16 verifier (verify.hpp) on one kernel: snarkjs 0.7's groth16.verify, checked
//     e(−π_A, π_B) · e(vk_x, γ) · e(π_C, δ) · e(α, β) = 1,   vk_x = IC₀ + Σ sᵢ·ICᵢ₊₁
// as one shared Miller loop and one final exponentiation (pairing.hpp). What depends on the key
// only is done once, when it is prepared: its points checked, the Miller loop of e(α, β), the lines
// of γ and δ, and tables of multiples of the first IC points (77 KB each; with one, a signal's term
// of vk_x costs one mixed addition per 4 bits instead of a double-and-add scalar multiplication).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "pairing.hpp"
#include "verify.hpp"
#include "zkey_points.hpp"

namespace mzk {
namespace MZK_KERNEL {

inline bool fqFrom(const U256& a, Fq& out) {
  if (!limbsBelowModulus<FqParams>(a.w)) return false;
  out = Fq::fromPlain(a.w);
  return true;
}
inline bool fq2From(const U256* a, Fq2& out) { return fqFrom(a[0], out.c0) && fqFrom(a[1], out.c1); }

/**
 * A point from snarkjs's projective form (z = 0: infinity; otherwise x/z², y/z³), checked canonical
 * and on its curve. The affine (0, 0) is not a point of either curve (b ≠ 0); it stands for
 * infinity in curve.hpp, so it is refused here when it comes with z ≠ 0.
 */
template <class C, class Read>
bool pointFrom(const Read& read, Affine<C>& out) {
  using F = typename C::F;
  F x, y, z;
  if (!read(x, y, z)) return false;
  if (z.isZero()) {
    out = Affine<C>::infinity();
    return true;
  }
  if (z != F::one()) {
    const F zi = z.inverse(), zi2 = zi.squared();
    x = x * zi2;
    y = y * zi2 * zi;
  }
  out = Affine<C>{x, y};
  return !out.isInfinity() && out.onCurve();
}
inline bool g1From(const G1Input& in, G1Affine& out) {
  return pointFrom<G1>([&](Fq& x, Fq& y, Fq& z) { return fqFrom(in.x, x) && fqFrom(in.y, y) && fqFrom(in.z, z); }, out);
}
inline bool g2From(const G2Input& in, G2Affine& out) {
  return pointFrom<G2>([&](Fq2& x, Fq2& y, Fq2& z) { return fq2From(in.x, x) && fq2From(in.y, y) && fq2From(in.z, z); }, out);
}

inline const Psi& g2Endomorphism() {
  static const Psi psi;
  return psi;
}

class VerifyingKey final : public PreparedVerifyingKey {
 public:
  VerifyingKey(const G1Affine& alpha, const G2Affine& beta, const G2Affine& gamma, const G2Affine& delta, const std::vector<G1Affine>& ic)
      : gamma_(gamma), delta_(delta), ic_(ic), icTables_(std::min(ic.size() - 1, TABLES)) {
    const G2Prepared betaLines(beta);
    const PairingTerm ab{alpha, &betaLines};
    alphaBeta_ = millerLoop(&ab, 1);
    for (size_t i = 0; i < icTables_.size(); i++) icTables_[i].build(ic[i + 1]);
  }

  size_t nPublic() const override { return ic_.size() - 1; }

  bool verify(const ProofInput& proof, const U256* signals, size_t n) const override {
    if (n != ic_.size() - 1) return false;
    for (size_t i = 0; i < n; i++)
      if (!limbsBelowModulus<FrParams>(signals[i].w)) return false;
    G1Affine a, c;
    G2Affine b;
    if (!g1From(proof.a, a) || !g2From(proof.b, b) || !g1From(proof.c, c)) return false;
    if (!inG2(b, g2Endomorphism())) return false;
    G1Jac vkx = G1Jac::from(ic_[0]);
    for (size_t i = 0; i < n; i++)
      vkx = vkx.add(i < icTables_.size() ? icTables_[i].mul(signals[i].w, 4) : G1Jac::from(ic_[i + 1]).mul(signals[i].w));
    const G2Prepared bLines(b);
    const PairingTerm terms[3] = {{a.negated(), &bLines}, {vkx.toAffine(), &gamma_}, {c, &delta_}};
    return pairingProductIsOne(terms, 3, &alphaBeta_);
  }

 private:
  /** Signals with a table: past them (circuits with many public signals) the memory is not worth it. */
  static constexpr size_t TABLES = 32;
  G2Prepared gamma_, delta_;
  std::vector<G1Affine> ic_;
  std::vector<FixedBase<G1>> icTables_;
  Fq12 alphaBeta_;
};

inline std::shared_ptr<PreparedVerifyingKey> prepareVerifyingKey(const VerifyingKeyInput& in) {
  const auto refuse = [](const std::string& name, const char* why) { throw InputError("verification key: " + name + " " + why); };
  const char* NOT_ON_CURVE = "is not a point of the curve (a coordinate is not below q, or the point is off the curve)";
  G1Affine alpha;
  if (!g1From(in.alpha, alpha)) refuse("vk_alpha_1", NOT_ON_CURVE);
  if (alpha.isInfinity()) refuse("vk_alpha_1", "is the point at infinity");
  G2Affine g2[3];
  const G2Input* g2In[3] = {&in.beta, &in.gamma, &in.delta};
  const char* g2Names[3] = {"vk_beta_2", "vk_gamma_2", "vk_delta_2"};
  for (int k = 0; k < 3; k++) {
    if (!g2From(*g2In[k], g2[k])) refuse(g2Names[k], NOT_ON_CURVE);
    if (g2[k].isInfinity()) refuse(g2Names[k], "is the point at infinity");
    if (!inG2(g2[k], g2Endomorphism())) refuse(g2Names[k], "is on the twist but not in the r-order subgroup G2");
  }
  if (in.ic.empty()) throw InputError("verification key: IC is empty");
  std::vector<G1Affine> ic(in.ic.size());
  for (size_t i = 0; i < ic.size(); i++)
    if (!g1From(in.ic[i], ic[i])) refuse("IC[" + std::to_string(i) + "]", NOT_ON_CURVE);
  return std::make_shared<VerifyingKey>(alpha, g2[0], g2[1], g2[2], ic);
}

}  // namespace MZK_KERNEL
}  // namespace mzk
