// The Groth16 verifier on the portable kernel (see verify.hpp).
#define MZK_KERNEL generic
#include "verifier.hpp"

namespace mzk {
PrepareVerifyingKey prepareVerifyingKeyGeneric() { return &generic::prepareVerifyingKey; }
}  // namespace mzk
