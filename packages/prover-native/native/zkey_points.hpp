// The zkey point check (points.hpp): every point a prover or verifier reads from a snarkjs bn128
// zkey, checked before an uploaded key is accepted. Compiled once per kernel, like the prover
// (prove.hpp), whose file reader (binfile.hpp) and point readers (codec.hpp) it shares.
//
// G1 has cofactor 1, so a point on the curve is in G1. The twist E'(Fq2) that holds G2 has order
// r·h with h = 2q − r = 10069 · 5864401 · …, so a point on the twist may lie outside G2, and r·P = O
// is the definition of membership. Multiplying every B2 point by r (254 bits) costs four times the
// check used here, and one random linear combination of all the points checked once would be cheaper
// still but not sound: a component of order 10069 cancels out with probability about 1/10069. The
// test here is deterministic and exact for BN254 (El Housni, Guillevic, Piellard, "Co-factor clearing
// and subgroup membership testing on pairing-friendly curves", ePrint 2022/348, §5: valid because
// x₀ ≢ 4 mod 13 and x₀ ≢ 92 mod 97):
//     P ∈ G2  ⇔  [x₀ + 1]P + ψ([x₀]P) + ψ²([x₀]P) = ψ³([2x₀]P)
// where ψ is the untwist-Frobenius-twist endomorphism: one 63-bit scalar multiplication per point,
// ψ costing two Fq2 multiplications. test/points.test.ts checks it against r·P = O (BigInt) on
// random points of G2, of the whole twist, and of G2 plus small-order points.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "binfile.hpp"
#include "codec.hpp"
#include "curve.hpp"
#include "kernel.hpp"
#include "parallel.hpp"
#include "points.hpp"

namespace mzk {
namespace MZK_KERNEL {

/** a^e in Fq2 for a plain 256-bit exponent (square and multiply). */
inline Fq2 fq2Pow(const Fq2& a, const u64* e) {
  Fq2 r = Fq2::one();
  for (int i = 255; i >= 0; i--) {
    r = r.squared();
    if ((e[i / 64] >> (i % 64)) & 1) r = r * a;
  }
  return r;
}

/** (q − 1) / d as plain limbs, for a small d dividing q − 1. */
inline void qMinusOneOver(u64 d, u64* out) {
  u64 v[4] = {FqParams::P[0] - 1, FqParams::P[1], FqParams::P[2], FqParams::P[3]};
  u128 rem = 0;
  for (int i = 3; i >= 0; i--) {
    const u128 cur = (rem << 64) | v[i];
    out[i] = (u64)(cur / d);
    rem = cur % d;
  }
}

/**
 * ψ(x, y) = (x̄·ξ^((q−1)/3), ȳ·ξ^((q−1)/2)) with ξ = 9 + u. The Frobenius (conjugation) is a field
 * automorphism, so on Jacobian coordinates ψ(X : Y : Z) = (X̄·cx : Ȳ·cy : Z̄), no inversion.
 */
struct Psi {
  Fq2 cx, cy;
  Psi() {
    const Fq2 xi{Fq::fromU64(9), Fq::fromU64(1)};
    u64 e[4];
    qMinusOneOver(3, e);
    cx = fq2Pow(xi, e);
    qMinusOneOver(2, e);
    cy = fq2Pow(xi, e);
  }
  static Fq2 conj(const Fq2& a) { return Fq2{a.c0, -a.c1}; }
  G2Jac operator()(const G2Jac& p) const { return G2Jac{conj(p.X) * cx, conj(p.Y) * cy, conj(p.Z)}; }
};

inline bool sameJacobian(const G2Jac& a, const G2Jac& b) {
  if (a.isInfinity() || b.isInfinity()) return a.isInfinity() && b.isInfinity();
  const Fq2 za = a.Z.squared(), zb = b.Z.squared();
  return a.X * zb == b.X * za && a.Y * zb * b.Z == b.Y * za * a.Z;
}

/** Membership of a point on the twist in G2 (the point at infinity included), by the test above. */
inline bool inG2(const G2Affine& p, const Psi& psi) {
  if (p.isInfinity()) return true;
  G2Jac xp = G2Jac::infinity();
  for (int bit = 62; bit >= 0; bit--) {
    xp = xp.dbl();
    if ((BN_SEED >> bit) & 1) xp = xp.addAffine(p);
  }
  const G2Jac lhs = xp.addAffine(p).add(psi(xp)).add(psi(psi(xp)));
  const G2Jac rhs = psi(psi(psi(xp.dbl())));
  return sameJacobian(lhs, rhs);
}

/** Why a point was refused, or nullptr. */
inline const char* g1Problem(const uint8_t* p) {
  G1Affine a;
  return readG1(p, a) ? nullptr : "is not on the curve or not canonical (corrupt key)";
}
inline const char* g2Problem(const uint8_t* p, const Psi& psi) {
  G2Affine a;
  if (!readG2(p, a)) return "is not on the curve or not canonical (corrupt key)";
  return inG2(a, psi) ? nullptr : "is on the twist but not in the r-order subgroup G2 (corrupt or crafted key)";
}

inline PointCount checkZkeyPoints(const uint8_t* data, size_t length, int threads) {
  static const Psi psi;
  const BinFile file(data, length, BinFormat{"zkey", "a zkey file", 2, "zkey"});
  const BinSection& s1 = file.section(1, 4, "protocol");
  if (le32(s1.data) != 1) throw InputError("zkey: not a Groth16 key (protocol " + std::to_string(le32(s1.data)) + "; 1 is Groth16)");
  const BinSection& s2 = file.section(2, "Groth16 header");
  if (s2.size < 72 || le32(s2.data) != 32 || !sameModulus<FqParams>(s2.data + 4) || le32(s2.data + 36) != 32 ||
      !sameModulus<FrParams>(s2.data + 40)) {
    throw InputError("zkey: not a bn128 Groth16 key (its header names other fields)");
  }
  file.section(2, 72 + 12 + 3 * 64 + 3 * 128, "Groth16 header");
  const uint8_t* h = s2.data + 72;
  const uint64_t nVars = le32(h), nPublic = le32(h + 4), domainSize = le32(h + 8);
  if (nPublic + 1 > nVars) throw InputError("zkey: inconsistent header (more public signals than variables)");

  PointCount counted;
  // The verification key's points in the header: none may be the point at infinity.
  struct HeaderPoint { const char* name; size_t offset; bool g2; };
  const HeaderPoint header[] = {{"alpha1", 0, false}, {"beta1", 64, false}, {"beta2", 128, true},
                                {"gamma2", 256, true}, {"delta1", 384, false}, {"delta2", 448, true}};
  for (const HeaderPoint& point : header) {
    const uint8_t* p = h + 12 + point.offset;
    const char* problem = point.g2 ? g2Problem(p, psi) : g1Problem(p);
    if (problem == nullptr && std::all_of(p, p + (point.g2 ? 128 : 64), [](uint8_t b) { return b == 0; })) problem = "is the point at infinity";
    if (problem != nullptr) throw InputError(std::string("zkey: ") + point.name + " (section 2, the header) " + problem);
    (point.g2 ? counted.g2 : counted.g1)++;
  }

  struct Section { uint32_t type; uint64_t count; bool g2; const char* name; };
  const Section sections[] = {{3, nPublic + 1, false, "IC"}, {5, nVars, false, "A points"}, {6, nVars, false, "B1 points"},
                              {7, nVars, true, "B2 points"}, {8, nVars - nPublic - 1, false, "C points"}, {9, domainSize, false, "H points"}};
  for (const Section& section : sections) {
    const size_t size = section.g2 ? 128 : 64;
    const BinSection& s = file.section(section.type, section.count * size, section.name);
    // Each thread notes the first bad point of its range; the lowest one is reported.
    const int T = section.count >= 1024 ? std::max(1, threads) : 1;
    std::vector<uint64_t> firstBad((size_t)T, section.count);
    std::vector<const char*> why((size_t)T, nullptr);
    forkJoin(T, [&](int t) {
      size_t begin, end;
      splitRange((size_t)section.count, T, t, begin, end);
      for (size_t i = begin; i < end; i++) {
        const uint8_t* p = s.data + i * size;
        const char* problem = section.g2 ? g2Problem(p, psi) : g1Problem(p);
        if (problem != nullptr) {
          firstBad[(size_t)t] = i;
          why[(size_t)t] = problem;
          return;
        }
      }
    });
    for (int t = 0; t < T; t++) {
      if (why[(size_t)t] != nullptr) {
        throw InputError("zkey: point " + std::to_string(firstBad[(size_t)t]) + " of section " + std::to_string(section.type) + " (" +
                         section.name + ") " + why[(size_t)t]);
      }
    }
    (section.g2 ? counted.g2 : counted.g1) += section.count;
  }
  return counted;
}

}  // namespace MZK_KERNEL
}  // namespace mzk
