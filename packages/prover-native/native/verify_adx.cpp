// The Groth16 verifier on the BMI2 + ADX kernel (see verify.hpp); built with kernel_adx.cpp's flags.
#if defined(__x86_64__)
#define MZK_KERNEL adx
#define MZK_ADX_ASM 1
#include "verifier.hpp"

namespace mzk {
PrepareVerifyingKey prepareVerifyingKeyAdx() { return &adx::prepareVerifyingKey; }
}  // namespace mzk
#else
#include "verify.hpp"
namespace mzk {
PrepareVerifyingKey prepareVerifyingKeyAdx() { return nullptr; }
}  // namespace mzk
#endif
