// The portable kernel: plain C++ on unsigned __int128, for any 64-bit CPU.
#define MZK_KERNEL generic
#include "kernel_impl.hpp"

namespace mzk {
const Kernel& kernelGeneric() {
  static const Kernel kernel{"generic", &generic::load, &generic::testOp};
  return kernel;
}
}  // namespace mzk
