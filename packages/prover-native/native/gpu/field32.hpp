// BN254's two prime fields, Fq (coordinates) and Fr (scalars), in Montgomery form on eight 32-bit
// limbs (hd.hpp says why 32-bit), written once for the CPU and the GPU. The CPU prover has its own
// 64-bit field (../field.hpp); this one is for the CUDA MSM kernels, and the tests run it on the CPU
// against the BigInt reference.
//
// No constant is typed in but the BN seed x₀: the moduli are BN254's polynomials in x₀, and
// −p⁻¹ mod 2³², 2²⁵⁶ mod p and 2⁵¹² mod p are computed from them at compile time. Device code may
// not read a class's constexpr arrays, so every function takes the constants it needs into a local
// constexpr value (folded into immediates once its loops are unrolled).
#pragma once

#include "hd.hpp"

namespace mzk {
namespace gpu {

constexpr int LIMBS = 8;

/** 256 bits as eight little-endian 32-bit limbs: a modulus, a constant, a plain integer. */
struct Limbs {
  u32 v[LIMBS];
};

namespace detail {

/** a·m + add, for a product that fits in 256 bits (the moduli's Horner steps). */
MZK_HD constexpr Limbs mulSmallAdd(const Limbs& a, u64 m, u32 add) {
  // a·m = a·m_lo + (a·m_hi)·2^32, each a row of 32-bit multiply-adds.
  const u32 lo = (u32)m, hi = (u32)(m >> 32);
  Limbs r{};
  u32 carry = add;
  for (int i = 0; i < LIMBS; i++) r.v[i] = mac(a.v[i], lo, 0, carry);
  carry = 0;
  for (int i = 0; i + 1 < LIMBS; i++) r.v[i + 1] = mac(a.v[i], hi, r.v[i + 1], carry);
  return r;
}

MZK_HD constexpr bool geq(const Limbs& a, const Limbs& b) {
  for (int i = LIMBS - 1; i >= 0; i--) {
    if (a.v[i] != b.v[i]) return a.v[i] > b.v[i];
  }
  return true;
}

/** 2a mod p for a < p < 2^255. */
MZK_HD constexpr Limbs doubleMod(const Limbs& a, const Limbs& p) {
  Limbs r{};
  u32 carry = 0;
  for (int i = 0; i < LIMBS; i++) r.v[i] = addc(a.v[i], a.v[i], carry);
  if (geq(r, p)) {
    u32 borrow = 0;
    for (int i = 0; i < LIMBS; i++) r.v[i] = subb(r.v[i], p.v[i], borrow);
  }
  return r;
}

/** 2^k mod p, by doubling (compile time only). */
MZK_HD constexpr Limbs powerOfTwoMod(int k, const Limbs& p) {
  Limbs r{};
  r.v[0] = 1;
  for (int i = 0; i < k; i++) r = doubleMod(r, p);
  return r;
}

/** −p⁻¹ mod 2^32 for odd p0: Newton's iteration doubles the correct low bits (1, 2, 4, … 32). */
MZK_HD constexpr u32 negInverse32(u32 p0) {
  u32 inv = 1;
  for (int i = 0; i < 5; i++) inv *= 2u - p0 * inv;
  return 0u - inv;
}

/**
 * BN254's primes from its seed x₀: q = 36x⁴ + 36x³ + 24x² + 6x + 1 and r = 36x⁴ + 36x³ + 18x² + 6x + 1
 * (the group order), told apart by the x² coefficient.
 */
MZK_HD constexpr Limbs bnPrime(u32 squareCoefficient) {
  constexpr u64 X0 = 4965661367192848881ULL;
  Limbs a{};
  a.v[0] = 36;
  a = mulSmallAdd(a, X0, 36);
  a = mulSmallAdd(a, X0, squareCoefficient);
  a = mulSmallAdd(a, X0, 6);
  a = mulSmallAdd(a, X0, 1);
  return a;
}

}  // namespace detail

/** Fq, BN254's base field. */
struct Bn254Fq {
  MZK_HD static constexpr Limbs modulus() { return detail::bnPrime(24); }
};
/** Fr, BN254's scalar field (the order of G1). */
struct Bn254Fr {
  MZK_HD static constexpr Limbs modulus() { return detail::bnPrime(18); }
};

/**
 * An element of the prime field S::modulus() in Montgomery form (a·2^256 mod p), fully reduced.
 * Every operation is written for any p below 2^254 (both BN254 fields): sums of two elements then
 * fit in 256 bits, and Montgomery products stay below 2p, so one conditional subtraction finishes.
 */
template <class S>
struct Fp32 {
  u32 v[LIMBS];

  static constexpr u32 INV = detail::negInverse32(S::modulus().v[0]);
  static_assert((S::modulus().v[0] & 1u) == 1u, "the modulus is odd");
  static_assert(S::modulus().v[0] * INV == 0xffffffffu, "INV is -1/p mod 2^32");
  static_assert(S::modulus().v[LIMBS - 1] < (1u << 30), "p < 2^254: sums and CIOS products fit in eight limbs");
  static_assert(S::modulus().v[0] >= 2, "p - 2 borrows nothing from the low limb (inverse)");

  MZK_HD static constexpr Limbs modulus() { return S::modulus(); }
  /** 2^256 mod p: one in Montgomery form. */
  MZK_HD static constexpr Limbs montOne() { return detail::powerOfTwoMod(256, S::modulus()); }
  /** 2^512 mod p: a Montgomery product by it enters Montgomery form. */
  MZK_HD static constexpr Limbs montR2() { return detail::powerOfTwoMod(512, S::modulus()); }

  MZK_HD static Fp32 zero() {
    Fp32 r;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) r.v[i] = 0;
    return r;
  }
  MZK_HD static Fp32 one() {
    constexpr Limbs ONE = montOne();
    return fromLimbs(ONE);
  }
  /** The limbs as they are, taken as Montgomery form. */
  MZK_HD static Fp32 fromLimbs(const Limbs& l) {
    Fp32 r;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) r.v[i] = l.v[i];
    return r;
  }

  MZK_HD bool isZero() const {
    u32 acc = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) acc |= v[i];
    return acc == 0;
  }
  MZK_HD bool operator==(const Fp32& o) const {
    u32 acc = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  MZK_HD bool operator!=(const Fp32& o) const { return !(*this == o); }

  /** r = t − p where t ≥ p, else t (t < 2p); branch-free, so a warp's lanes do not diverge. */
  MZK_HD static void reduceOnce(u32* r, const u32* t) {
    constexpr Limbs P = modulus();
    u32 s[LIMBS];
    u32 borrow = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) s[i] = subb(t[i], P.v[i], borrow);
    const u32 keep = 0u - borrow;  // all ones when t < p
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) r[i] = (t[i] & keep) | (s[i] & ~keep);
  }

  MZK_HD static void add(Fp32& r, const Fp32& a, const Fp32& b) {
    u32 t[LIMBS];
    u32 carry = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) t[i] = addc(a.v[i], b.v[i], carry);
    reduceOnce(r.v, t);
  }

  MZK_HD static void sub(Fp32& r, const Fp32& a, const Fp32& b) {
    constexpr Limbs P = modulus();
    u32 t[LIMBS];
    u32 borrow = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) t[i] = subb(a.v[i], b.v[i], borrow);
    const u32 mask = 0u - borrow;  // add p back where a < b
    u32 carry = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) r.v[i] = addc(t[i], P.v[i] & mask, carry);
  }

  /** −a; zero stays zero (0 − 0 borrows nothing, so p is not added). */
  MZK_HD static void neg(Fp32& r, const Fp32& a) { sub(r, zero(), a); }

  /**
   * Montgomery product a·b·2^−256 mod p, CIOS: for each limb of b, add a·b[i] to the running value,
   * then the multiple m·p that clears its low limb (m = t0·(−p⁻¹) mod 2^32), and drop that limb.
   * The running value stays below 2p, in nine limbs plus a carry word; each row is a chain of
   * mac() steps, the shape of PTX's mad.lo.cc/madc.hi.cc.
   */
  MZK_HD static void mul(Fp32& r, const Fp32& a, const Fp32& b) {
    constexpr Limbs P = modulus();
    u32 t[LIMBS + 2];
    MZK_UNROLL for (int i = 0; i < LIMBS + 2; i++) t[i] = 0;
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) {
      u32 c = 0;
      MZK_UNROLL for (int j = 0; j < LIMBS; j++) t[j] = mac(a.v[j], b.v[i], t[j], c);
      u32 c2 = 0;
      t[LIMBS] = addc(t[LIMBS], c, c2);
      t[LIMBS + 1] = c2;
      const u32 m = t[0] * INV;
      c = 0;
      (void)mac(m, P.v[0], t[0], c);  // zero by the choice of m: only its carry is kept
      MZK_UNROLL for (int j = 1; j < LIMBS; j++) t[j - 1] = mac(m, P.v[j], t[j], c);
      c2 = 0;
      t[LIMBS - 1] = addc(t[LIMBS], c, c2);
      t[LIMBS] = t[LIMBS + 1] + c2;
    }
    // t < 2p < 2^255: t[LIMBS] is zero here.
    reduceOnce(r.v, t);
  }

  /** a²; a plain product for now (a dedicated squaring saves about a quarter of the multiplies). */
  MZK_HD static void sqr(Fp32& r, const Fp32& a) { mul(r, a, a); }

  MZK_HD Fp32 operator+(const Fp32& o) const { Fp32 r; add(r, *this, o); return r; }
  MZK_HD Fp32 operator-(const Fp32& o) const { Fp32 r; sub(r, *this, o); return r; }
  MZK_HD Fp32 operator*(const Fp32& o) const { Fp32 r; mul(r, *this, o); return r; }
  MZK_HD Fp32 operator-() const { Fp32 r; neg(r, *this); return r; }
  MZK_HD Fp32 squared() const { Fp32 r; sqr(r, *this); return r; }
  MZK_HD Fp32 doubled() const { Fp32 r; add(r, *this, *this); return r; }

  /** From a canonical plain integer (< p) into Montgomery form: the product with 2^512 mod p. */
  MZK_HD static Fp32 fromPlain(const Limbs& l) {
    constexpr Limbs R2 = montR2();
    Fp32 r;
    mul(r, fromLimbs(l), fromLimbs(R2));
    return r;
  }
  MZK_HD static Fp32 fromU32(u32 x) {
    Limbs l{};
    l.v[0] = x;
    return fromPlain(l);
  }
  /** Out of Montgomery form: the product with plain 1 is a·2^−256, the canonical integer. */
  MZK_HD Limbs toPlain() const {
    Limbs oneLimbs{};
    oneLimbs.v[0] = 1;
    Fp32 r;
    mul(r, *this, fromLimbs(oneLimbs));
    Limbs out{};
    MZK_UNROLL for (int i = 0; i < LIMBS; i++) out.v[i] = r.v[i];
    return out;
  }

  /** this^e, square and multiply from the top bit. */
  MZK_HD Fp32 pow(const Limbs& e) const {
    Fp32 r = one();
    for (int i = LIMBS * 32 - 1; i >= 0; i--) {
      r = r.squared();
      if ((e.v[i / 32] >> (i % 32)) & 1u) r = r * *this;
    }
    return r;
  }

  /**
   * The inverse by Fermat, a^(p−2); zero maps to zero. About 380 products: for the host and for
   * the last step of a reduction, never per point in a kernel (there, batch inversion).
   */
  MZK_HD Fp32 inverse() const {
    constexpr Limbs P = modulus();
    Limbs e = P;
    e.v[0] -= 2;  // p is odd and its low limb above 2: no borrow
    return pow(e);
  }
};

using Fq32 = Fp32<Bn254Fq>;
using Fr32 = Fp32<Bn254Fr>;

}  // namespace gpu
}  // namespace mzk
