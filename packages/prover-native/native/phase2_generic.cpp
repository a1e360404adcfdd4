// The native phase 2 on the portable kernel (see phase2.hpp).
#define MZK_KERNEL generic
#include "phase2_impl.hpp"

namespace mzk {
NewZkey newZkeyGeneric() { return &generic::newZkey; }
Contribute contributeGeneric() { return &generic::contribute; }
}  // namespace mzk
