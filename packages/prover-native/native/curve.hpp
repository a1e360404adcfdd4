// Fq2 and the BN254 groups G1 (over Fq) and G2 (over Fq2, the sextic twist): affine points
// (infinity encoded as x = y = 0, which is not on either curve since b != 0) and Jacobian points
// (infinity: Z = 0). Formulas for a = 0 from the Explicit-Formulas Database: dbl-2009-l,
// add-2007-bl, madd-2007-bl.
#pragma once

#include <vector>

#include "field.hpp"

namespace mzk {
namespace MZK_KERNEL {

/** BN254's seed x₀: t = 6x₀² + 1 and r = q + 1 − t; the optimal ate pairing loops over 6x₀ + 2. */
constexpr u64 BN_SEED = 4965661367192848881ULL;

/** Fq2 = Fq[u] / (u^2 + 1). */
struct Fq2 {
  Fq c0, c1;

  static MZK_INLINE Fq2 zero() { return Fq2{Fq::zero(), Fq::zero()}; }
  static MZK_INLINE Fq2 one() { return Fq2{Fq::one(), Fq::zero()}; }
  MZK_INLINE bool isZero() const { return c0.isZero() && c1.isZero(); }
  MZK_INLINE bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
  MZK_INLINE bool operator!=(const Fq2& o) const { return !(*this == o); }
  MZK_INLINE Fq2 operator+(const Fq2& o) const { return Fq2{c0 + o.c0, c1 + o.c1}; }
  MZK_INLINE Fq2 operator-(const Fq2& o) const { return Fq2{c0 - o.c0, c1 - o.c1}; }
  MZK_INLINE Fq2 operator-() const { return Fq2{-c0, -c1}; }
  MZK_INLINE Fq2& operator+=(const Fq2& o) { c0 += o.c0; c1 += o.c1; return *this; }
  MZK_INLINE Fq2& operator-=(const Fq2& o) { c0 -= o.c0; c1 -= o.c1; return *this; }
  /** Karatsuba: three base-field multiplications. */
  MZK_INLINE Fq2 operator*(const Fq2& o) const {
    const Fq a = c0 * o.c0;
    const Fq b = c1 * o.c1;
    const Fq s = (c0 + c1) * (o.c0 + o.c1);
    return Fq2{a - b, s - a - b};
  }
  MZK_INLINE Fq2& operator*=(const Fq2& o) { *this = *this * o; return *this; }
  /** (a + bu)^2 = (a + b)(a - b) + 2ab u: two multiplications. */
  MZK_INLINE Fq2 squared() const {
    const Fq ab = c0 * c1;
    return Fq2{(c0 + c1) * (c0 - c1), ab.doubled()};
  }
  MZK_INLINE Fq2 doubled() const { return Fq2{c0.doubled(), c1.doubled()}; }
  Fq2 inverse() const {
    const Fq t = (c0.squared() + c1.squared()).inverse();
    return Fq2{c0 * t, -(c1 * t)};
  }
};

/** Curve constants: y^2 = x^3 + B. */
struct G1Params {
  using F = Fq;
  static F b() { return F::fromU64(3); }
};
struct G2Params {
  using F = Fq2;
  /** b' = 3 / (9 + u). */
  static const F& b() {
    static const F value = Fq2{Fq::fromU64(3), Fq::zero()} * Fq2{Fq::fromU64(9), Fq::fromU64(1)}.inverse();
    return value;
  }
};

template <class C>
struct Affine {
  using F = typename C::F;
  F x, y;

  static MZK_INLINE Affine infinity() { return Affine{F::zero(), F::zero()}; }
  MZK_INLINE bool isInfinity() const { return x.isZero() && y.isZero(); }
  MZK_INLINE Affine negated() const { return Affine{x, -y}; }
  bool onCurve() const {
    if (isInfinity()) return true;
    return y.squared() == x.squared() * x + C::b();
  }
};

template <class C>
struct Jacobian {
  using F = typename C::F;
  F X, Y, Z;

  static MZK_INLINE Jacobian infinity() { return Jacobian{F::one(), F::one(), F::zero()}; }
  static MZK_INLINE Jacobian from(const Affine<C>& p) {
    return p.isInfinity() ? infinity() : Jacobian{p.x, p.y, F::one()};
  }
  MZK_INLINE bool isInfinity() const { return Z.isZero(); }
  MZK_INLINE Jacobian negated() const { return Jacobian{X, -Y, Z}; }

  /** dbl-2009-l: 2M + 5S. */
  Jacobian dbl() const {
    if (isInfinity()) return *this;
    const F A = X.squared();
    const F B = Y.squared();
    const F Cc = B.squared();
    F D = (X + B).squared() - A - Cc;
    D = D.doubled();
    const F E = A.doubled() + A;
    const F Fv = E.squared();
    Jacobian r;
    r.X = Fv - D.doubled();
    F c8 = Cc.doubled();
    c8 = c8.doubled();
    c8 = c8.doubled();
    r.Y = E * (D - r.X) - c8;
    r.Z = (Y * Z).doubled();
    return r;
  }

  /** add-2007-bl: 11M + 5S. */
  Jacobian add(const Jacobian& q) const {
    if (isInfinity()) return q;
    if (q.isInfinity()) return *this;
    const F Z1Z1 = Z.squared();
    const F Z2Z2 = q.Z.squared();
    const F U1 = X * Z2Z2;
    const F U2 = q.X * Z1Z1;
    const F S1 = Y * q.Z * Z2Z2;
    const F S2 = q.Y * Z * Z1Z1;
    const F H = U2 - U1;
    const F rr = (S2 - S1).doubled();
    if (H.isZero()) {
      if (rr.isZero()) return dbl();
      return infinity();
    }
    const F I = H.doubled().squared();
    const F J = H * I;
    const F V = U1 * I;
    Jacobian r;
    r.X = rr.squared() - J - V.doubled();
    r.Y = rr * (V - r.X) - (S1 * J).doubled();
    r.Z = ((Z + q.Z).squared() - Z1Z1 - Z2Z2) * H;
    return r;
  }

  /** madd-2007-bl (q affine): 7M + 4S. */
  Jacobian addAffine(const Affine<C>& q) const {
    if (q.isInfinity()) return *this;
    if (isInfinity()) return from(q);
    const F Z1Z1 = Z.squared();
    const F U2 = q.x * Z1Z1;
    const F S2 = q.y * Z * Z1Z1;
    const F H = U2 - X;
    const F rr = (S2 - Y).doubled();
    if (H.isZero()) {
      if (rr.isZero()) return dbl();
      return infinity();
    }
    const F HH = H.squared();
    F I = HH.doubled();
    I = I.doubled();
    const F J = H * I;
    const F V = X * I;
    Jacobian r;
    r.X = rr.squared() - J - V.doubled();
    r.Y = rr * (V - r.X) - (Y * J).doubled();
    r.Z = (Z + H).squared() - Z1Z1 - HH;
    return r;
  }

  Affine<C> toAffine() const {
    if (isInfinity()) return Affine<C>::infinity();
    const F zi = Z.inverse();
    const F zi2 = zi.squared();
    return Affine<C>{X * zi2, Y * zi2 * zi};
  }

  /** this · k for a scalar of `limbs` plain 64-bit words (little-endian), 4-bit fixed windows. */
  Jacobian mul(const u64* k, int limbs = 4) const {
    Jacobian table[16];
    table[0] = infinity();
    for (int i = 1; i < 16; i++) table[i] = table[i - 1].add(*this);
    Jacobian r = infinity();
    for (int i = 16 * limbs - 1; i >= 0; i--) {
      for (int d = 0; d < 4; d++) r = r.dbl();
      r = r.add(table[(k[i / 16] >> ((i % 16) * 4)) & 15]);
    }
    return r;
  }

  /** this · k + q · l with shared doublings (Shamir's trick), both scalars of `limbs` words. */
  Jacobian mulPlus(const u64* k, const Jacobian& q, const u64* l, int limbs) const {
    Jacobian tp[16], tq[16];
    tp[0] = tq[0] = infinity();
    for (int i = 1; i < 16; i++) {
      tp[i] = tp[i - 1].add(*this);
      tq[i] = tq[i - 1].add(q);
    }
    Jacobian r = infinity();
    for (int i = 16 * limbs - 1; i >= 0; i--) {
      for (int d = 0; d < 4; d++) r = r.dbl();
      r = r.add(tp[(k[i / 16] >> ((i % 16) * 4)) & 15]);
      r = r.add(tq[(l[i / 16] >> ((i % 16) * 4)) & 15]);
    }
    return r;
  }
};

/** Jacobian to affine for many points with one inversion. */
template <class C>
void batchToAffine(const Jacobian<C>* in, Affine<C>* out, size_t n, typename C::F* scratch1, typename C::F* scratch2) {
  using F = typename C::F;
  for (size_t i = 0; i < n; i++) scratch1[i] = in[i].Z;
  batchInverse<F>(scratch1, n, scratch2);
  for (size_t i = 0; i < n; i++) {
    if (in[i].isInfinity()) {
      out[i] = Affine<C>::infinity();
      continue;
    }
    const F zi2 = scratch1[i].squared();
    out[i] = Affine<C>{in[i].X * zi2, in[i].Y * zi2 * scratch1[i]};
  }
}

/**
 * Multiples of one fixed point (the zkey's δ): table[pos][j - 1] = j · 2^(4·pos) · P, affine, so
 * k · P for a scalar of up to 4·POSITIONS bits is one mixed addition per nibble, no doublings.
 */
template <class C>
struct FixedBase {
  static constexpr int POSITIONS = 80;  // 320-bit scalars: the blinded ones (see random.hpp)
  std::vector<Affine<C>> table;

  void build(const Affine<C>& p) {
    using F = typename C::F;
    std::vector<Jacobian<C>> jac((size_t)POSITIONS * 15);
    Jacobian<C> base = Jacobian<C>::from(p);
    for (int pos = 0; pos < POSITIONS; pos++) {
      Jacobian<C> acc = base;
      for (int j = 1; j <= 15; j++) {
        jac[(size_t)pos * 15 + (j - 1)] = acc;
        acc = acc.add(base);
      }
      for (int d = 0; d < 4; d++) base = base.dbl();
    }
    table.resize(jac.size());
    std::vector<F> s1(jac.size()), s2(jac.size());
    batchToAffine<C>(jac.data(), table.data(), jac.size(), s1.data(), s2.data());
  }

  Jacobian<C> mul(const u64* k, int limbs) const {
    Jacobian<C> r = Jacobian<C>::infinity();
    for (int pos = 0; pos < 16 * limbs && pos < POSITIONS; pos++) {
      const unsigned nib = (unsigned)((k[pos / 16] >> ((pos % 16) * 4)) & 15);
      if (nib != 0) r = r.addAffine(table[(size_t)pos * 15 + (nib - 1)]);
    }
    return r;
  }
};

using G1 = G1Params;
using G2 = G2Params;
using G1Affine = Affine<G1>;
using G2Affine = Affine<G2>;
using G1Jac = Jacobian<G1>;
using G2Jac = Jacobian<G2>;

}  // namespace MZK_KERNEL
}  // namespace mzk
