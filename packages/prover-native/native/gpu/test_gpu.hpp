// The GPU arithmetic's test entry points (test_gpu.cpp), run on the CPU: the test addon's
// `testGpu` (test_addon.cpp) calls them. Test-only, like test_ops.hpp: linked into the test addon
// alone, never into the production addon.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../test_ops.hpp"

namespace mzk {

/**
 * One operation of field32.hpp, fq2.hpp, g1xyzz.hpp, g2xyzz.hpp, msmplan.hpp or ntt32.hpp
 * ("fq.mul", "fq2.inv", "g1.madd", "g2.add", "msm.digits", "msm.g2", "ntt.tocoset", ...) on plain
 * little-endian values; InputError for bad arguments.
 */
std::vector<uint8_t> gpuTestOp(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints);

}  // namespace mzk
