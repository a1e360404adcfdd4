// The development setup on the portable kernel (see setup.hpp).
#define MZK_KERNEL generic
#include "setup_dev.hpp"

namespace mzk {
SetupDevelopment setupDevelopmentGeneric() { return &generic::setupDevelopment; }
}  // namespace mzk
