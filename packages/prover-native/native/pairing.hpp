// The BN254 optimal ate pairing: the Fq6 / Fq12 tower over curve.hpp's Fq2, a Miller loop shared
// by any number of pairs (one squaring of the accumulator per step for all of them), and one final
// exponentiation. Compiled once per kernel (verify_generic.cpp, verify_adx.cpp), like the prover.
//
// Tower: Fq6 = Fq2[v] / (v³ − ξ), Fq12 = Fq6[w] / (w² − v), ξ = 9 + u. G2 lives on the D-type
// sextic twist y² = x³ + 3/ξ, untwisted into E(Fq12) by (x, y) ↦ (x·w², y·w³), so a line evaluated at
// a G1 point P has nonzero coefficients only at 1, w and w³ (= v·w): "sparse" lines.
//
// Line functions in homogeneous projective coordinates: Costello, Lange, Naehrig, "Faster pairing
// computations on curves with high-degree twists" (PKC 2010) and Aranha, Karabina, Longa, Gebotys,
// López, "Faster explicit formulas for computing pairings over ordinary curves" (Eurocrypt 2011,
// ePrint 2010/526), §4: doubling and mixed addition steps that yield the line's coefficients before
// multiplying in P's coordinates, so the lines of a fixed G2 point can be computed once and kept.
//
// Final exponentiation f^((q¹²−1)/r): the easy part f^((q⁶−1)(q²+1)) by a conjugation, one
// inversion and a Frobenius; the hard part by Fuentes-Castañeda, Knapp, Rodríguez-Henríquez,
// "Faster hashing to G2" (SAC 2011), §5 (BN curves), which raises to a multiple m·(q⁴−q²+1)/r with
// m = 2x(6x² + 3x + 1), coprime to r: a fixed power of the reduced pairing, still bilinear and
// non-degenerate, and equal to 1 exactly when the reduced pairing is. Exponentiations by x use the
// Granger–Scott squaring of the cyclotomic subgroup ("Faster squaring in the cyclotomic subgroup of
// sixth degree extensions", PKC 2010, §3.1).
#pragma once

#include <vector>

#include "curve.hpp"

namespace mzk {
namespace MZK_KERNEL {

/** a·ξ for ξ = 9 + u: (a0 + a1·u)(9 + u) = (9a0 − a1) + (a0 + 9a1)·u. */
MZK_INLINE Fq2 mulByXi(const Fq2& a) {
  const Fq a0x8 = a.c0.doubled().doubled().doubled();
  const Fq a1x8 = a.c1.doubled().doubled().doubled();
  return Fq2{a0x8 + a.c0 - a.c1, a1x8 + a.c1 + a.c0};
}

MZK_INLINE Fq2 conj2(const Fq2& a) { return Fq2{a.c0, -a.c1}; }
MZK_INLINE Fq2 scaled(const Fq2& a, const Fq& k) { return Fq2{a.c0 * k, a.c1 * k}; }

/** Fq6 = Fq2[v] / (v³ − ξ). */
struct Fq6 {
  Fq2 c0, c1, c2;

  static MZK_INLINE Fq6 zero() { return Fq6{Fq2::zero(), Fq2::zero(), Fq2::zero()}; }
  static MZK_INLINE Fq6 one() { return Fq6{Fq2::one(), Fq2::zero(), Fq2::zero()}; }
  MZK_INLINE bool operator==(const Fq6& o) const { return c0 == o.c0 && c1 == o.c1 && c2 == o.c2; }
  MZK_INLINE Fq6 operator+(const Fq6& o) const { return Fq6{c0 + o.c0, c1 + o.c1, c2 + o.c2}; }
  MZK_INLINE Fq6 operator-(const Fq6& o) const { return Fq6{c0 - o.c0, c1 - o.c1, c2 - o.c2}; }
  MZK_INLINE Fq6 operator-() const { return Fq6{-c0, -c1, -c2}; }
  /** ·v: the coefficients move up one place, v³ wrapping round as ξ. */
  MZK_INLINE Fq6 mulByV() const { return Fq6{mulByXi(c2), c0, c1}; }

  /** Karatsuba over three coefficients: six Fq2 multiplications. */
  Fq6 operator*(const Fq6& o) const {
    const Fq2 t0 = c0 * o.c0, t1 = c1 * o.c1, t2 = c2 * o.c2;
    return Fq6{mulByXi((c1 + c2) * (o.c1 + o.c2) - t1 - t2) + t0, (c0 + c1) * (o.c0 + o.c1) - t0 - t1 + mulByXi(t2),
               (c0 + c2) * (o.c0 + o.c2) - t0 - t2 + t1};
  }
  /** · (b0 + b1·v): the shape of a line's w-part in Fq6. */
  Fq6 mulBy01(const Fq2& b0, const Fq2& b1) const {
    const Fq2 t0 = c0 * b0, t1 = c1 * b1;
    return Fq6{mulByXi(c2 * b1) + t0, (c0 + c1) * (b0 + b1) - t0 - t1, c2 * b0 + t1};
  }

  /** Chung–Hasan SQR2: three squarings and two multiplications in Fq2. */
  Fq6 squared() const {
    const Fq2 s0 = c0.squared(), s1 = (c0 * c1).doubled(), s2 = (c0 - c1 + c2).squared(), s3 = (c1 * c2).doubled(),
              s4 = c2.squared();
    return Fq6{s0 + mulByXi(s3), s1 + mulByXi(s4), s1 + s2 + s3 - s0 - s4};
  }

  Fq6 inverse() const {
    const Fq2 t0 = c0.squared() - mulByXi(c1 * c2);
    const Fq2 t1 = mulByXi(c2.squared()) - c0 * c1;
    const Fq2 t2 = c1.squared() - c0 * c2;
    const Fq2 d = (c0 * t0 + mulByXi(c2 * t1 + c1 * t2)).inverse();
    return Fq6{t0 * d, t1 * d, t2 * d};
  }
};

/** Frobenius constants: γ[i] = ξ^(i·(q − 1)/6), so (a·w^i)^q = ā·γ[i]·w^i for a in Fq2. */
struct FrobeniusConstants {
  Fq2 g[6];
  FrobeniusConstants() {
    // (q − 1) / 6 by long division of the four limbs.
    u64 e[4] = {FqParams::P[0] - 1, FqParams::P[1], FqParams::P[2], FqParams::P[3]};
    u128 rem = 0;
    for (int i = 3; i >= 0; i--) {
      const u128 cur = (rem << 64) | e[i];
      e[i] = (u64)(cur / 6);
      rem = cur % 6;
    }
    const Fq2 xi{Fq::fromU64(9), Fq::fromU64(1)};
    Fq2 g1 = Fq2::one();
    for (int i = 255; i >= 0; i--) {
      g1 = g1.squared();
      if ((e[i / 64] >> (i % 64)) & 1) g1 = g1 * xi;
    }
    g[0] = Fq2::one();
    for (int i = 1; i < 6; i++) g[i] = g[i - 1] * g1;
  }
  static const FrobeniusConstants& get() {
    static const FrobeniusConstants constants;
    return constants;
  }
};

/** Fq12 = Fq6[w] / (w² − v). As powers of w: c0 = (w⁰, w², w⁴), c1 = (w¹, w³, w⁵). */
struct Fq12 {
  Fq6 c0, c1;

  static MZK_INLINE Fq12 one() { return Fq12{Fq6::one(), Fq6::zero()}; }
  MZK_INLINE bool operator==(const Fq12& o) const { return c0 == o.c0 && c1 == o.c1; }
  MZK_INLINE bool operator!=(const Fq12& o) const { return !(*this == o); }
  bool isOne() const { return *this == one(); }

  Fq12 operator*(const Fq12& o) const {
    const Fq6 t0 = c0 * o.c0, t1 = c1 * o.c1;
    return Fq12{t0 + t1.mulByV(), (c0 + c1) * (o.c0 + o.c1) - t0 - t1};
  }
  /** (a + bw)² = (a + b)(a + bv) − ab − ab·v + 2ab·w. */
  Fq12 squared() const {
    const Fq6 ab = c0 * c1;
    return Fq12{(c0 + c1) * (c0 + c1.mulByV()) - ab - ab.mulByV(), ab + ab};
  }
  /** The q⁶-power: in the cyclotomic subgroup (after the easy part), the inverse. */
  MZK_INLINE Fq12 conjugate() const { return Fq12{c0, -c1}; }
  Fq12 inverse() const {
    const Fq6 t = (c0.squared() - c1.squared().mulByV()).inverse();
    return Fq12{c0 * t, -(c1 * t)};
  }

  /** · a line l0 + l1·w + l2·w³ (sparse: three Fq2 coefficients of six). */
  Fq12 mulByLine(const Fq2& l0, const Fq2& l1, const Fq2& l2) const {
    const Fq6 t0{c0.c0 * l0, c0.c1 * l0, c0.c2 * l0};
    const Fq6 t1 = c1.mulBy01(l1, l2);
    return Fq12{t0 + t1.mulByV(), (c0 + c1).mulBy01(l0 + l1, l2) - t0 - t1};
  }

  /** f^q: conjugate each Fq2 coefficient and scale the one of w^i by γ[i]. */
  Fq12 frobenius() const {
    const Fq2* g = FrobeniusConstants::get().g;
    return Fq12{Fq6{conj2(c0.c0), conj2(c0.c1) * g[2], conj2(c0.c2) * g[4]}, Fq6{conj2(c1.c0) * g[1], conj2(c1.c1) * g[3], conj2(c1.c2) * g[5]}};
  }

  /**
   * Granger–Scott squaring, for elements of the cyclotomic subgroup only: viewing Fq12 as
   * Fq4³ with Fq4 = Fq2[s] / (s² − ξ), s = w³, each Fq4 square costs two Fq2 squarings.
   * The pieces, as (a, b) for a + b·s: (w⁰, w³), (w¹, w⁴), (w², w⁵).
   */
  Fq12 cyclotomicSquared() const {
    const Fq2 &z0 = c0.c0, &z4 = c0.c1, &z3 = c0.c2, &z2 = c1.c0, &z1 = c1.c1, &z5 = c1.c2;
    // (a + b·s)² = (a² + ξb²) + 2ab·s, with 2ab = (a + b)² − a² − b².
    const auto fq4Square = [](const Fq2& a, const Fq2& b, Fq2& r0, Fq2& r1) {
      const Fq2 a2 = a.squared(), b2 = b.squared();
      r0 = a2 + mulByXi(b2);
      r1 = (a + b).squared() - a2 - b2;
    };
    Fq2 t0, t1, t2, t3, t4, t5;
    fq4Square(z0, z1, t0, t1);
    fq4Square(z2, z3, t2, t3);
    fq4Square(z4, z5, t4, t5);
    // A' = 3A² − 2·conj(A), B' = 3ξ·C² + 2·conj(B), C' = 3B² − 2·conj(C) on the three Fq4 pieces.
    const auto three = [](const Fq2& a) { return a.doubled() + a; };
    const Fq2 r0 = three(t0) - z0.doubled();
    const Fq2 r1 = three(t1) + z1.doubled();
    const Fq2 s5 = mulByXi(t5);
    const Fq2 r2 = three(s5) + z2.doubled();
    const Fq2 r3 = three(t4) - z3.doubled();
    const Fq2 r4 = three(t2) - z4.doubled();
    const Fq2 r5 = three(t3) + z5.doubled();
    return Fq12{Fq6{r0, r4, r3}, Fq6{r2, r1, r5}};
  }

  /** f^x for the BN seed, f in the cyclotomic subgroup. */
  Fq12 powX() const {
    Fq12 r = *this;
    for (int bit = 61; bit >= 0; bit--) {
      r = r.cyclotomicSquared();
      if ((BN_SEED >> bit) & 1) r = r * *this;
    }
    return r;
  }

  /** this^e for a plain exponent of `limbs` words (square and multiply; tests only). */
  Fq12 pow(const u64* e, int limbs) const {
    Fq12 r = one();
    for (int i = 64 * limbs - 1; i >= 0; i--) {
      r = r.squared();
      if ((e[i / 64] >> (i % 64)) & 1) r = r * *this;
    }
    return r;
  }
};

/** The final exponentiation (see the top of the file); zero maps to zero, never to one. */
inline Fq12 finalExponentiation(const Fq12& f) {
  // Easy part: f^(q⁶ − 1), then ^(q² + 1). Afterwards f is in the cyclotomic subgroup, where the
  // conjugate is the inverse.
  Fq12 t = f.conjugate() * f.inverse();
  t = t.frobenius().frobenius() * t;
  // Hard part: f^(m·(q⁴ − q² + 1)/r) = f^(λ0 + λ1·q + λ2·q² + λ3·q³) with
  // λ0 = 12x³ + 12x² + 6x + 1, λ1 = 12x³ + 6x² + 4x, λ2 = 12x³ + 6x² + 6x, λ3 = 12x³ + 6x² + 4x − 1.
  const Fq12 a = t.powX().conjugate();                 // f^−x
  const Fq12 a2 = a.cyclotomicSquared();               // f^−2x
  const Fq12 a6 = a2.cyclotomicSquared() * a2;         // f^−6x
  const Fq12 b = a6.powX().conjugate();                // f^6x²
  const Fq12 c = b.cyclotomicSquared().powX();         // f^12x³
  const Fq12 d = c * b * a6.conjugate();               // f^(12x³ + 6x² + 6x)
  const Fq12 e = d * a2;                               // f^(12x³ + 6x² + 4x)
  const Fq12 l0 = d * b * t;                           // f^(12x³ + 12x² + 6x + 1)
  const Fq12 l3 = e * t.conjugate();                   // f^(12x³ + 6x² + 4x − 1)
  return l0 * e.frobenius() * d.frobenius().frobenius() * l3.frobenius().frobenius().frobenius();
}

/**
 * A line's coefficients before P is multiplied in: l(P) = c0·y_P + c1·x_P·w + c2·w³. (The tangent at
 * T = ψ(T') is (y_P − y_T) − λ(x_P − x_T) with x_T = x'·w², y_T = y'·w³, λ = λ'·w; scaled by a factor
 * in Fq2, which the final exponentiation removes.)
 */
struct LineCoeffs {
  Fq2 c0, c1, c2;
};

/** A G2 point in homogeneous projective coordinates (x = X/Z, y = Y/Z) while the loop walks. */
struct G2Proj {
  Fq2 X, Y, Z;
};

/** T ← 2T, and the tangent line at T (Aranha et al. 2010/526, eq. for the D-type twist). */
inline LineCoeffs doublingStep(G2Proj& T) {
  const Fq2 &X = T.X, &Y = T.Y, &Z = T.Z;
  const Fq2 B = Y.squared(), C = Z.squared();
  const Fq2 E = G2Params::b() * (C.doubled() + C);  // 3b'·Z²
  const Fq2 F = E.doubled() + E;
  const Fq2 H = (Y + Z).squared() - B - C;  // 2YZ
  const Fq2 XX = X.squared();
  // The paper's X3 = A(B − F), Y3 = G² − 3E², Z3 = B·H with A = XY/2 and G = (B + F)/2 halve twice;
  // homogeneous coordinates may all be scaled by 4 instead, which needs no halving:
  //   X3 = 2·XY·(B − F), Y3 = (B + F)² − 12E², Z3 = 4·B·H.
  const Fq2 XY = X * Y;
  const Fq2 E2 = E.squared();
  const Fq2 nX = (XY * (B - F)).doubled();
  const Fq2 nY = (B + F).squared() - (E2.doubled() + E2).doubled().doubled();
  const Fq2 nZ = (B * H).doubled().doubled();
  const LineCoeffs l{-H, XX.doubled() + XX, E - B};
  T = G2Proj{nX, nY, nZ};
  return l;
}

/** T ← T + Q (Q affine), and the line through T and Q. */
inline LineCoeffs additionStep(G2Proj& T, const G2Affine& Q) {
  const Fq2 theta = T.Y - Q.y * T.Z;
  const Fq2 lambda = T.X - Q.x * T.Z;
  const Fq2 C = theta.squared(), D = lambda.squared();
  const Fq2 E = lambda * D, F = T.Z * C, G = T.X * D;
  const Fq2 H = E + F - G.doubled();
  const Fq2 nX = lambda * H;
  const Fq2 nY = theta * (G - H) - E * T.Y;
  const Fq2 nZ = T.Z * E;
  const LineCoeffs l{lambda, -theta, theta * Q.x - lambda * Q.y};
  T = G2Proj{nX, nY, nZ};
  return l;
}

/** 6x + 2 in non-adjacent form, most significant digit first (65 bits, 22 nonzero digits). */
constexpr signed char ATE_NAF[] = {1, 0, -1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 0, 0, -1, 0, 1, 0, -1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1,
                                   0, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 0, 1, 0, 0, 0, -1, 0, 0, -1, 0, 1, 0, 1, 0, 0, 0};
constexpr int ATE_NAF_LENGTH = (int)sizeof(ATE_NAF);

/**
 * π(Q) = (x̄·ξ^((q−1)/3), ȳ·ξ^((q−1)/2)): the q-power Frobenius on the twist, as the untwisted point's
 * Frobenius expressed back on the twist.
 */
inline G2Affine twistFrobenius(const G2Affine& Q) {
  const Fq2* g = FrobeniusConstants::get().g;
  return G2Affine{conj2(Q.x) * g[2], conj2(Q.y) * g[3]};
}

/**
 * Every line the Miller loop of a fixed G2 point Q (not infinity) uses, in order: per NAF digit
 * after the first a doubling line and, for a nonzero digit, an addition line; then the lines
 * through π(Q) and −π²(Q). Precomputing them takes all G2 arithmetic out of the loop.
 */
struct G2Prepared {
  std::vector<LineCoeffs> lines;
  bool infinity = true;

  explicit G2Prepared(const G2Affine& Q) {
    if (Q.isInfinity()) return;
    infinity = false;
    lines.reserve(2 * ATE_NAF_LENGTH + 2);
    const G2Affine negQ = Q.negated();
    G2Proj T{Q.x, Q.y, Fq2::one()};
    for (int i = 1; i < ATE_NAF_LENGTH; i++) {
      lines.push_back(doublingStep(T));
      if (ATE_NAF[i] == 1) lines.push_back(additionStep(T, Q));
      else if (ATE_NAF[i] == -1) lines.push_back(additionStep(T, negQ));
    }
    const G2Affine q1 = twistFrobenius(Q);
    const G2Affine q2 = twistFrobenius(q1).negated();
    lines.push_back(additionStep(T, q1));
    lines.push_back(additionStep(T, q2));
  }
};

/** A G1 point and a prepared G2 point: one factor e(P, Q) of a product of pairings. */
struct PairingTerm {
  G1Affine p;
  const G2Prepared* q;
};

/**
 * The product of the Miller loops f_{6x+2,Q}(P)·l_{T,π(Q)}(P)·l_{T',−π²(Q)}(P) of every term, with
 * one shared squaring per step; a term with either point at infinity contributes 1.
 */
inline Fq12 millerLoop(const PairingTerm* terms, size_t n) {
  std::vector<const PairingTerm*> live;
  live.reserve(n);
  for (size_t k = 0; k < n; k++)
    if (!terms[k].p.isInfinity() && !terms[k].q->infinity) live.push_back(&terms[k]);
  std::vector<size_t> at(live.size(), 0);
  Fq12 f = Fq12::one();
  const auto apply = [&](size_t k) {
    const LineCoeffs& l = live[k]->q->lines[at[k]++];
    f = f.mulByLine(scaled(l.c0, live[k]->p.y), scaled(l.c1, live[k]->p.x), l.c2);
  };
  for (int i = 1; i < ATE_NAF_LENGTH; i++) {
    if (i > 1) f = f.squared();
    for (size_t k = 0; k < live.size(); k++) {
      apply(k);
      if (ATE_NAF[i] != 0) apply(k);
    }
  }
  for (size_t k = 0; k < live.size(); k++) {
    apply(k);
    apply(k);
  }
  return f;
}

/** ∏ e(P_k, Q_k) == 1, with one final exponentiation. */
inline bool pairingProductIsOne(const PairingTerm* terms, size_t n, const Fq12* extraMillerFactor = nullptr) {
  Fq12 f = millerLoop(terms, n);
  if (extraMillerFactor != nullptr) f = f * *extraMillerFactor;
  return finalExponentiation(f).isOne();
}

}  // namespace MZK_KERNEL
}  // namespace mzk
