// The boundary between the test addon's glue (test_addon.cpp) and the arithmetic's test entry
// points (test_ops_impl.hpp), compiled once per kernel (test_ops_generic.cpp, test_ops_adx.cpp)
// into the kernels' static libraries. Only the test addon (mzk_prover_test) refers to them, so the
// linker leaves them out of the production addon: nothing in mzk_prover.node reaches them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mzk {

struct Bytes {
  const uint8_t* data;
  size_t length;
};

/**
 * One operation of the field, curve, MSM, NTT or pairing arithmetic ("fq.mul", "g1.msm", "ntt",
 * "pairing.check", ...) on plain little-endian values; InputError for bad arguments.
 */
using TestOp = std::vector<uint8_t> (*)(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints);

TestOp testOpGeneric();
/** nullptr where the build has no ADX kernel (not x86-64). */
TestOp testOpAdx();

}  // namespace mzk
