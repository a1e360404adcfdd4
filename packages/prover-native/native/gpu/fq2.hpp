// Fq2 = Fq[u]/(u² + 1), the coordinate field of G2 (g2xyzz.hpp), over the
// 32-bit-limb Fq of field32.hpp, written once for the CPU and the GPU. An element is c0 + c1·u.
//
// The product is Karatsuba's: three Fq products instead of four, since (a0 + a1)(b0 + b1) − a0b0 −
// a1b1 is the u coefficient; Fq products dominate the G2 bucket additions, and additions are cheap.
#pragma once

#include "field32.hpp"

namespace mzk {
namespace gpu {

struct Fq2_32 {
  Fq32 c0, c1;

  MZK_HD static Fq2_32 zero() { return Fq2_32{Fq32::zero(), Fq32::zero()}; }
  MZK_HD static Fq2_32 one() { return Fq2_32{Fq32::one(), Fq32::zero()}; }
  MZK_HD static Fq2_32 fromU32(u32 x) { return Fq2_32{Fq32::fromU32(x), Fq32::zero()}; }

  MZK_HD bool isZero() const { return c0.isZero() && c1.isZero(); }
  MZK_HD bool operator==(const Fq2_32& o) const { return c0 == o.c0 && c1 == o.c1; }
  MZK_HD bool operator!=(const Fq2_32& o) const { return !(*this == o); }

  MZK_HD static void add(Fq2_32& r, const Fq2_32& a, const Fq2_32& b) {
    Fq32::add(r.c0, a.c0, b.c0);
    Fq32::add(r.c1, a.c1, b.c1);
  }
  MZK_HD static void sub(Fq2_32& r, const Fq2_32& a, const Fq2_32& b) {
    Fq32::sub(r.c0, a.c0, b.c0);
    Fq32::sub(r.c1, a.c1, b.c1);
  }
  MZK_HD static void neg(Fq2_32& r, const Fq2_32& a) {
    Fq32::neg(r.c0, a.c0);
    Fq32::neg(r.c1, a.c1);
  }

  /** (a0 + a1u)(b0 + b1u) = (a0b0 − a1b1) + ((a0 + a1)(b0 + b1) − a0b0 − a1b1)u, as u² = −1. */
  MZK_HD static void mul(Fq2_32& r, const Fq2_32& a, const Fq2_32& b) {
    const Fq32 t0 = a.c0 * b.c0;
    const Fq32 t1 = a.c1 * b.c1;
    const Fq32 cross = (a.c0 + a.c1) * (b.c0 + b.c1);
    r.c0 = t0 - t1;
    r.c1 = cross - t0 - t1;
  }

  /** (a0 + a1u)² = (a0 + a1)(a0 − a1) + 2a0a1·u: two Fq products. */
  MZK_HD static void sqr(Fq2_32& r, const Fq2_32& a) {
    const Fq32 c0 = (a.c0 + a.c1) * (a.c0 - a.c1);
    const Fq32 c1 = (a.c0 * a.c1).doubled();
    r.c0 = c0;
    r.c1 = c1;
  }

  MZK_HD Fq2_32 operator+(const Fq2_32& o) const { Fq2_32 r; add(r, *this, o); return r; }
  MZK_HD Fq2_32 operator-(const Fq2_32& o) const { Fq2_32 r; sub(r, *this, o); return r; }
  MZK_HD Fq2_32 operator*(const Fq2_32& o) const { Fq2_32 r; mul(r, *this, o); return r; }
  MZK_HD Fq2_32 operator-() const { Fq2_32 r; neg(r, *this); return r; }
  MZK_HD Fq2_32 squared() const { Fq2_32 r; sqr(r, *this); return r; }
  MZK_HD Fq2_32 doubled() const { Fq2_32 r; add(r, *this, *this); return r; }

  /**
   * 1/a = conj(a)/N(a) with the norm N(a) = a·conj(a) = a0² + a1² in Fq: one Fq inversion (a
   * Fermat power, so host or final-reduction use only, as Fq32::inverse). Zero maps to zero: its
   * norm is zero, whose Fq "inverse" is zero.
   */
  MZK_HD Fq2_32 inverse() const {
    const Fq32 t = (c0.squared() + c1.squared()).inverse();
    return Fq2_32{c0 * t, -(c1 * t)};
  }
};

}  // namespace gpu
}  // namespace mzk
