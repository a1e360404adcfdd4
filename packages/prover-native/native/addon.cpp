// The production addon (mzk_prover): the kernels in use and every binding, registered by group.
// The bindings live in bindings_*.cpp (keys, prove, points, setup, verify) over the helpers of
// bindings.hpp; every failure reaches JavaScript as an Error with a `code`, never an abort. The
// arithmetic's test entry points are in the separate test addon (test_addon.cpp).
#include <napi.h>

#include "bindings.hpp"

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  using namespace mzk::node;
  exportKernels(env, exports);
  registerKeys(env, exports);
  registerProve(env, exports);
  registerPoints(env, exports);
  registerSetup(env, exports);
  registerVerify(env, exports);
  return exports;
}

}  // namespace

NODE_API_MODULE(mzk_prover, Init)
