// The test entry points on the portable kernel (see test_ops.hpp).
#define MZK_KERNEL generic
#include "test_ops_impl.hpp"

namespace mzk {
TestOp testOpGeneric() { return &generic::testOp; }
}  // namespace mzk
