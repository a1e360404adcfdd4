// The native phase 2 on the BMI2 + ADX kernel (see phase2.hpp); built with kernel_adx.cpp's flags.
#if defined(__x86_64__)
#define MZK_KERNEL adx
#define MZK_ADX_ASM 1
#include "phase2_impl.hpp"

namespace mzk {
NewZkey newZkeyAdx() { return &adx::newZkey; }
Contribute contributeAdx() { return &adx::contribute; }
}  // namespace mzk
#else
#include "phase2.hpp"
namespace mzk {
NewZkey newZkeyAdx() { return nullptr; }
Contribute contributeAdx() { return nullptr; }
}  // namespace mzk
#endif
