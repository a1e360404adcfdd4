// The development setup on the BMI2 + ADX kernel (see setup.hpp); built with kernel_adx.cpp's flags.
#if defined(__x86_64__)
#define MZK_KERNEL adx
#define MZK_ADX_ASM 1
#include "setup_dev.hpp"

namespace mzk {
SetupDevelopment setupDevelopmentAdx() { return &adx::setupDevelopment; }
}  // namespace mzk
#else
#include "setup.hpp"
namespace mzk {
SetupDevelopment setupDevelopmentAdx() { return nullptr; }
}  // namespace mzk
#endif
