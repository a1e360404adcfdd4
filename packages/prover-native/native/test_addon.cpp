// The test addon (mzk_prover_test, binding.gyp): the arithmetic's test entry points (test_ops.hpp)
// for the BigInt reference tests, kept out of the production addon so that nothing a service loads
// can reach them. Built beside mzk_prover in a checkout (where test/ exists), never in a package.
// Exports `kernel` and `kernels` as the production addon does, so a test names the same kernels.
// `testGpu` runs the GPU arithmetic (gpu/: the CUDA MSM's field, curve and schedule) on the CPU.
#include <napi.h>

#include <cstring>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "gpu/test_gpu.hpp"
#include "test_ops.hpp"

namespace mzk {
namespace node {
namespace {

/** The (op, args: Uint8Array[], ints: number[]) every test entry point takes. */
struct TestCall {
  std::string op;
  std::vector<Bytes> args;
  std::vector<int64_t> ints;
};

TestCall testCall(const Napi::CallbackInfo& info, const char* usage) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsArray()) throw invalid(env, usage);
  TestCall call;
  call.op = info[0].As<Napi::String>();
  const Napi::Array a = info[1].As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) {
    const Napi::Value v = a.Get(i);
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) throw invalid(env, "test args must be Uint8Arrays");
    const Napi::Uint8Array b = v.As<Napi::Uint8Array>();
    call.args.push_back(Bytes{b.Data(), b.ByteLength()});
  }
  const Napi::Array n = info[2].As<Napi::Array>();
  for (uint32_t i = 0; i < n.Length(); i++) call.ints.push_back((int64_t)n.Get(i).ToNumber().DoubleValue());
  return call;
}

Napi::Uint8Array bytesResult(Napi::Env env, const std::vector<uint8_t>& out) {
  Napi::Uint8Array result = Napi::Uint8Array::New(env, out.size());
  if (!out.empty()) std::memcpy(result.Data(), out.data(), out.size());
  return result;
}

/** test(op, args: Uint8Array[], ints: number[], kernel?): the kernels' arithmetic, for tests. */
Napi::Value Test(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const TestCall call = testCall(info, "test(op, args, ints, kernel?)");
    const Kernel* kernel = &defaultKernel();
    if (info.Length() > 3 && info[3].IsString()) {
      kernel = kernelNamed(info[3].As<Napi::String>());
      if (kernel == nullptr) throw invalid(env, "kernel not available");
    }
    const TestOp testOp = std::string(kernel->name) == "adx" ? testOpAdx() : testOpGeneric();
    return bytesResult(env, testOp(call.op, call.args, call.ints));
  });
}

/** testGpu(op, args: Uint8Array[], ints: number[]): the GPU arithmetic (gpu/), run on the CPU. */
Napi::Value TestGpu(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const TestCall call = testCall(info, "testGpu(op, args, ints)");
    return bytesResult(env, gpuTestOp(call.op, call.args, call.ints));
  });
}

}  // namespace
}  // namespace node
}  // namespace mzk

namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  mzk::node::exportKernels(env, exports);
  exports.Set("test", Napi::Function::New(env, mzk::node::Test, "test"));
  exports.Set("testGpu", Napi::Function::New(env, mzk::node::TestGpu, "testGpu"));
  return exports;
}

}  // namespace

NODE_API_MODULE(mzk_prover_test, Init)
