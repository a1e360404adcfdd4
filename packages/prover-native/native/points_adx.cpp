// The zkey point check on the BMI2 + ADX kernel (see points.hpp); built with kernel_adx.cpp's flags.
#if defined(__x86_64__)
#define MZK_KERNEL adx
#define MZK_ADX_ASM 1
#include "zkey_points.hpp"

namespace mzk {
CheckZkeyPoints checkZkeyPointsAdx() { return &adx::checkZkeyPoints; }
}  // namespace mzk
#else
#include "points.hpp"
namespace mzk {
CheckZkeyPoints checkZkeyPointsAdx() { return nullptr; }
}  // namespace mzk
#endif
