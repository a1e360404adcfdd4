// G1 of BN254 (y² = x³ + 3 over Fq) for the GPU MSM, written once for the CPU and the GPU:
// affine points (the bases; infinity encoded as (0, 0), which is not on the curve, as the CPU
// prover encodes it) and XYZZ points, the bucket representation: (X, Y, ZZ, ZZZ) stands for
// x = X/ZZ, y = Y/ZZZ with ZZ³ = ZZZ², infinity when ZZ = 0.
//
// Why XYZZ for buckets: adding an affine point to an XYZZ bucket costs 8 multiplications and 2
// squarings with no inversion (a Jacobian mixed addition: 7M + 4S), and a full XYZZ addition
// 12M + 2S; a bucket is only ever added to, so these two dominate the kernels. Formulas for a = 0
// (Sutherland's xyzz formulas as the Explicit-Formulas Database lists them: add-2008-s,
// madd-2008-s, dbl-2008-s-1), with the cases they do not cover (P + P, P + (−P), infinity)
// handled before they run.
#pragma once

#include "field32.hpp"

namespace mzk {
namespace gpu {

struct G1Affine32 {
  Fq32 x, y;

  MZK_HD static G1Affine32 infinity() { return G1Affine32{Fq32::zero(), Fq32::zero()}; }
  MZK_HD bool isInfinity() const { return x.isZero() && y.isZero(); }
  MZK_HD G1Affine32 negated() const { return isInfinity() ? *this : G1Affine32{x, -y}; }
  MZK_HD bool operator==(const G1Affine32& o) const { return x == o.x && y == o.y; }
  /** On the curve, or the point at infinity. */
  MZK_HD bool onCurve() const {
    if (isInfinity()) return true;
    return y.squared() == x.squared() * x + Fq32::fromU32(3);
  }
};

/** A Jacobian triple (x = X/Z², y = Y/Z³; Z = 0 at infinity), the CPU prover's form. */
struct G1Jacobian32 {
  Fq32 X, Y, Z;
};

struct G1Xyzz {
  Fq32 X, Y, ZZ, ZZZ;

  MZK_HD static G1Xyzz infinity() { return G1Xyzz{Fq32::zero(), Fq32::zero(), Fq32::zero(), Fq32::zero()}; }
  MZK_HD bool isInfinity() const { return ZZ.isZero(); }
  MZK_HD static G1Xyzz fromAffine(const G1Affine32& p) {
    return p.isInfinity() ? infinity() : G1Xyzz{p.x, p.y, Fq32::one(), Fq32::one()};
  }
  MZK_HD G1Xyzz negated() const { return G1Xyzz{X, -Y, ZZ, ZZZ}; }

  /**
   * 2P (dbl-2008-s-1, a = 0): U = 2Y, V = U², W = U·V, S = X·V, M = 3X²; X3 = M² − 2S,
   * Y3 = M(S − X3) − W·Y, ZZ3 = V·ZZ, ZZZ3 = W·ZZZ. Infinity stays infinity (ZZ3 = V·0); G1 has
   * no point with y = 0 (its order is odd), so no other case can reach infinity.
   */
  MZK_HD G1Xyzz dbl() const {
    const Fq32 U = Y.doubled();
    const Fq32 V = U.squared();
    const Fq32 W = U * V;
    const Fq32 S = X * V;
    const Fq32 XX = X.squared();
    const Fq32 M = XX.doubled() + XX;
    const Fq32 X3 = M.squared() - S.doubled();
    const Fq32 Y3 = M * (S - X3) - W * Y;
    return G1Xyzz{X3, Y3, V * ZZ, W * ZZZ};
  }

  /**
   * this + q for an affine q (madd-2008-s): P = x2·ZZ − X, R = y2·ZZZ − Y, PP = P², PPP = P·PP,
   * Q = X·PP; X3 = R² − PPP − 2Q, Y3 = R(Q − X3) − Y·PPP, ZZ3 = ZZ·PP, ZZZ3 = ZZZ·PPP.
   * P = 0 means the same x: the same point (R = 0, double it) or its negation (infinity).
   */
  MZK_HD G1Xyzz addAffine(const G1Affine32& q) const {
    if (q.isInfinity()) return *this;
    if (isInfinity()) return fromAffine(q);
    const Fq32 P = q.x * ZZ - X;
    const Fq32 R = q.y * ZZZ - Y;
    if (P.isZero()) return R.isZero() ? fromAffine(q).dbl() : infinity();
    const Fq32 PP = P.squared();
    const Fq32 PPP = P * PP;
    const Fq32 Q = X * PP;
    const Fq32 X3 = R.squared() - PPP - Q.doubled();
    const Fq32 Y3 = R * (Q - X3) - Y * PPP;
    return G1Xyzz{X3, Y3, ZZ * PP, ZZZ * PPP};
  }

  /**
   * this + o (add-2008-s): U1 = X1·ZZ2, U2 = X2·ZZ1, S1 = Y1·ZZZ2, S2 = Y2·ZZZ1, P = U2 − U1,
   * R = S2 − S1; then as the mixed addition with ZZ3 = ZZ1·ZZ2·PP, ZZZ3 = ZZZ1·ZZZ2·PPP.
   */
  MZK_HD G1Xyzz add(const G1Xyzz& o) const {
    if (o.isInfinity()) return *this;
    if (isInfinity()) return o;
    const Fq32 U1 = X * o.ZZ;
    const Fq32 U2 = o.X * ZZ;
    const Fq32 S1 = Y * o.ZZZ;
    const Fq32 S2 = o.Y * ZZZ;
    const Fq32 P = U2 - U1;
    const Fq32 R = S2 - S1;
    if (P.isZero()) return R.isZero() ? dbl() : infinity();
    const Fq32 PP = P.squared();
    const Fq32 PPP = P * PP;
    const Fq32 Q = U1 * PP;
    const Fq32 X3 = R.squared() - PPP - Q.doubled();
    const Fq32 Y3 = R * (Q - X3) - S1 * PPP;
    return G1Xyzz{X3, Y3, ZZ * o.ZZ * PP, ZZZ * o.ZZZ * PPP};
  }

  /**
   * Affine, with one inversion: ZZ/ZZZ is 1/z where ZZ = z², ZZZ = z³, so 1/ZZ = (ZZ/ZZZ)². A
   * Fermat inversion: host or final-reduction use only.
   */
  MZK_HD G1Affine32 toAffine() const {
    if (isInfinity()) return G1Affine32::infinity();
    const Fq32 zzzInv = ZZZ.inverse();
    const Fq32 zInv = ZZ * zzzInv;
    return G1Affine32{X * zInv.squared(), Y * zzzInv};
  }

  /** Jacobian with Z = ZZZ: Z² = ZZ³ and Z³ = ZZZ³, so X·ZZ², Y·ZZZ² keep x and y; no inversion. */
  MZK_HD G1Jacobian32 toJacobian() const {
    if (isInfinity()) return G1Jacobian32{Fq32::one(), Fq32::one(), Fq32::zero()};
    return G1Jacobian32{X * ZZ.squared(), Y * ZZZ.squared(), ZZZ};
  }
};

}  // namespace gpu
}  // namespace mzk
