// The same kernel compiled with BMI2 (mulx: multiplication that leaves the flags alone) and ADX;
// chosen at run time only on CPUs that have both (binding.gyp gives this file -mbmi2 -madx).
#if defined(__x86_64__)
#define MZK_KERNEL adx
#define MZK_ADX_ASM 1
#include "prove.hpp"

namespace mzk {
const Kernel* kernelAdx() {
  static const Kernel kernel{"adx", &adx::load};
  return &kernel;
}
}  // namespace mzk
#else
#include "kernel.hpp"
namespace mzk {
const Kernel* kernelAdx() { return nullptr; }
}  // namespace mzk
#endif
