// The test entry points on the BMI2 + ADX kernel (see test_ops.hpp); built with kernel_adx.cpp's flags.
#if defined(__x86_64__)
#define MZK_KERNEL adx
#define MZK_ADX_ASM 1
#include "test_ops_impl.hpp"

namespace mzk {
TestOp testOpAdx() { return &adx::testOp; }
}  // namespace mzk
#else
#include "test_ops.hpp"
namespace mzk {
TestOp testOpAdx() { return nullptr; }
}  // namespace mzk
#endif
