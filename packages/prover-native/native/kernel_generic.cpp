// The portable kernel: plain C++ on unsigned __int128, for any 64-bit CPU.
#define MZK_KERNEL generic
#include "prove.hpp"

namespace mzk {
const Kernel& kernelGeneric() {
  static const Kernel kernel{"generic", &generic::load};
  return kernel;
}
}  // namespace mzk
