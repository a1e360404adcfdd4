// BN254's G1 (y² = x³ + 3 over Fq) for the GPU MSM, and the XYZZ point arithmetic it shares with G2
// (g2xyzz.hpp: the same formulas over Fq2), written once for the CPU and the GPU: affine points
// (the bases; infinity encoded as all-zero coordinates, which is not on either curve, as the CPU
// prover encodes it) and XYZZ points, the bucket representation: (X, Y, ZZ, ZZZ) stands for
// x = X/ZZ, y = Y/ZZZ with ZZ³ = ZZZ², infinity when ZZ = 0.
//
// Why XYZZ for buckets: adding an affine point to an XYZZ bucket costs 8 multiplications and 2
// squarings with no inversion (a Jacobian mixed addition: 7M + 4S), and a full XYZZ addition
// 12M + 2S; a bucket is only ever added to, so these two dominate the kernels. Formulas for a = 0
// (Sutherland's xyzz formulas as the Explicit-Formulas Database lists them: add-2008-s,
// madd-2008-s, dbl-2008-s-1), with the cases they do not cover (P + P, P + (−P), infinity)
// handled before they run. None of them uses b, so one template serves both curves: a curve C
// names its coordinate field C::F and its b (for onCurve, a host-side check).
#pragma once

#include "field32.hpp"

namespace mzk {
namespace gpu {

template <class C>
struct Affine32 {
  using F = typename C::F;
  F x, y;

  MZK_HD static Affine32 infinity() { return Affine32{F::zero(), F::zero()}; }
  MZK_HD bool isInfinity() const { return x.isZero() && y.isZero(); }
  MZK_HD Affine32 negated() const { return isInfinity() ? *this : Affine32{x, -y}; }
  MZK_HD bool operator==(const Affine32& o) const { return x == o.x && y == o.y; }
  /** On the curve, or the point at infinity. */
  MZK_HD bool onCurve() const {
    if (isInfinity()) return true;
    return y.squared() == x.squared() * x + C::b();
  }
};

/** A Jacobian triple (x = X/Z², y = Y/Z³; Z = 0 at infinity), the CPU prover's form. */
template <class C>
struct Jacobian32 {
  typename C::F X, Y, Z;
};

template <class C>
struct Xyzz {
  using F = typename C::F;
  using Affine = Affine32<C>;
  F X, Y, ZZ, ZZZ;

  MZK_HD static Xyzz infinity() { return Xyzz{F::zero(), F::zero(), F::zero(), F::zero()}; }
  MZK_HD bool isInfinity() const { return ZZ.isZero(); }
  MZK_HD static Xyzz fromAffine(const Affine& p) { return p.isInfinity() ? infinity() : Xyzz{p.x, p.y, F::one(), F::one()}; }
  MZK_HD Xyzz negated() const { return Xyzz{X, -Y, ZZ, ZZZ}; }

  /**
   * 2P (dbl-2008-s-1, a = 0): U = 2Y, V = U², W = U·V, S = X·V, M = 3X²; X3 = M² − 2S,
   * Y3 = M(S − X3) − W·Y, ZZ3 = V·ZZ, ZZZ3 = W·ZZZ. Infinity stays infinity (ZZ3 = V·0). Neither
   * curve has a point with y = 0 (a point of order 2: E(Fq) has odd order r, the twist E'(Fq2)
   * odd order r·(2q − r)), so no other case can reach infinity.
   */
  MZK_HD Xyzz dbl() const {
    const F U = Y.doubled();
    const F V = U.squared();
    const F W = U * V;
    const F S = X * V;
    const F XX = X.squared();
    const F M = XX.doubled() + XX;
    const F X3 = M.squared() - S.doubled();
    const F Y3 = M * (S - X3) - W * Y;
    return Xyzz{X3, Y3, V * ZZ, W * ZZZ};
  }

  /**
   * this + q for an affine q (madd-2008-s): P = x2·ZZ − X, R = y2·ZZZ − Y, PP = P², PPP = P·PP,
   * Q = X·PP; X3 = R² − PPP − 2Q, Y3 = R(Q − X3) − Y·PPP, ZZ3 = ZZ·PP, ZZZ3 = ZZZ·PPP.
   * P = 0 means the same x: the same point (R = 0, double it) or its negation (infinity).
   */
  MZK_HD Xyzz addAffine(const Affine& q) const {
    if (q.isInfinity()) return *this;
    if (isInfinity()) return fromAffine(q);
    const F P = q.x * ZZ - X;
    const F R = q.y * ZZZ - Y;
    if (P.isZero()) return R.isZero() ? fromAffine(q).dbl() : infinity();
    const F PP = P.squared();
    const F PPP = P * PP;
    const F Q = X * PP;
    const F X3 = R.squared() - PPP - Q.doubled();
    const F Y3 = R * (Q - X3) - Y * PPP;
    return Xyzz{X3, Y3, ZZ * PP, ZZZ * PPP};
  }

  /**
   * this + o (add-2008-s): U1 = X1·ZZ2, U2 = X2·ZZ1, S1 = Y1·ZZZ2, S2 = Y2·ZZZ1, P = U2 − U1,
   * R = S2 − S1; then as the mixed addition with ZZ3 = ZZ1·ZZ2·PP, ZZZ3 = ZZZ1·ZZZ2·PPP.
   */
  MZK_HD Xyzz add(const Xyzz& o) const {
    if (o.isInfinity()) return *this;
    if (isInfinity()) return o;
    const F U1 = X * o.ZZ;
    const F U2 = o.X * ZZ;
    const F S1 = Y * o.ZZZ;
    const F S2 = o.Y * ZZZ;
    const F P = U2 - U1;
    const F R = S2 - S1;
    if (P.isZero()) return R.isZero() ? dbl() : infinity();
    const F PP = P.squared();
    const F PPP = P * PP;
    const F Q = U1 * PP;
    const F X3 = R.squared() - PPP - Q.doubled();
    const F Y3 = R * (Q - X3) - S1 * PPP;
    return Xyzz{X3, Y3, ZZ * o.ZZ * PP, ZZZ * o.ZZZ * PPP};
  }

  /**
   * Affine, with one inversion: ZZ/ZZZ is 1/z where ZZ = z², ZZZ = z³, so 1/ZZ = (ZZ/ZZZ)². A
   * Fermat inversion: host or final-reduction use only.
   */
  MZK_HD Affine toAffine() const {
    if (isInfinity()) return Affine::infinity();
    const F zzzInv = ZZZ.inverse();
    const F zInv = ZZ * zzzInv;
    return Affine{X * zInv.squared(), Y * zzzInv};
  }

  /** Jacobian with Z = ZZZ: Z² = ZZ³ and Z³ = ZZZ³, so X·ZZ², Y·ZZZ² keep x and y; no inversion. */
  MZK_HD Jacobian32<C> toJacobian() const {
    if (isInfinity()) return Jacobian32<C>{F::one(), F::one(), F::zero()};
    return Jacobian32<C>{X * ZZ.squared(), Y * ZZZ.squared(), ZZZ};
  }
};

/** G1: y² = x³ + 3 over Fq. */
struct G1Curve {
  using F = Fq32;
  MZK_HD static Fq32 b() { return Fq32::fromU32(3); }
};

using G1Affine32 = Affine32<G1Curve>;
using G1Jacobian32 = Jacobian32<G1Curve>;
using G1Xyzz = Xyzz<G1Curve>;

}  // namespace gpu
}  // namespace mzk
