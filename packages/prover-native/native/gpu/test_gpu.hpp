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
 * One operation of field32.hpp, g1xyzz.hpp or msmplan.hpp ("fq.mul", "g1.madd", "msm.digits",
 * "msm.g1", ...) on plain little-endian values; InputError for bad arguments.
 */
std::vector<uint8_t> gpuTestOp(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints);

}  // namespace mzk
