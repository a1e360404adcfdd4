// The boundary between the Node-API glue (bindings_points.cpp) and the zkey point check (zkey_points.hpp),
// which, like the prover, is compiled once per kernel (points_generic.cpp, points_adx.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mzk {

/** How many points a check looked at, by group; a failed check throws InputError instead. */
struct PointCount {
  uint64_t g1 = 0, g2 = 0;
};

/**
 * Checks every point a Groth16 prover or verifier reads from a snarkjs bn128 zkey: canonical
 * coordinates, G1 on the curve, G2 on the twist and in its r-order subgroup. Throws InputError
 * naming the first bad point (section and index).
 */
using CheckZkeyPoints = PointCount (*)(const uint8_t* data, size_t length, int threads);

CheckZkeyPoints checkZkeyPointsGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
CheckZkeyPoints checkZkeyPointsAdx();

}  // namespace mzk
