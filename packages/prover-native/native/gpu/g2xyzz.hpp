// BN254's G2 for the GPU MSM: the sextic twist y² = x³ + 3/(9 + u) over Fq2 (fq2.hpp), the curve
// the CPU prover (../curve.hpp) and snarkjs use, in the XYZZ coordinates of g1xyzz.hpp: the same
// a = 0 formulas (mixed and full addition, doubling, negation, to affine and to Jacobian) over
// Fq2 instead of Fq. Affine infinity is all four coordinates zero, as the CPU prover encodes it.
#pragma once

#include "fq2.hpp"
#include "g1xyzz.hpp"

namespace mzk {
namespace gpu {

/** G2: y² = x³ + b with b = 3/(9 + u). */
struct G2Curve {
  using F = Fq2_32;
  /**
   * 3/(9 + u) = 3(9 − u)/82 = 27/82 − (3/82)u: from small integers and one Fq inversion, not a
   * typed-in constant. No formula uses b; it is for onCurve, a host-side check.
   */
  MZK_HD static Fq2_32 b() {
    const Fq32 inv82 = Fq32::fromU32(82).inverse();
    return Fq2_32{Fq32::fromU32(27) * inv82, -(Fq32::fromU32(3) * inv82)};
  }
};

using G2Affine32 = Affine32<G2Curve>;
using G2Jacobian32 = Jacobian32<G2Curve>;
using G2Xyzz = Xyzz<G2Curve>;

}  // namespace gpu
}  // namespace mzk
