// The JavaScript handle of a loaded key (an External tagged as ours), shared by the bindings that
// load keys (bindings_keys.cpp) and those that prove with them (bindings_prove.cpp).
#pragma once

#include <napi.h>

#include <memory>

#include "bindings.hpp"
#include "kernel.hpp"

namespace mzk {
namespace node {

/** A handle's `impl` is empty once unloaded: every later use is refused instead of proving. */
struct Handle {
  std::shared_ptr<ZKeyImpl> impl;
  const Kernel* kernel;
};

inline constexpr napi_type_tag ZKEY_TAG = {0x6d7a6b5f7a6b6579ULL, 0x1f6a3c0e9b2d4471ULL};

/** The handle at argument 0, unloaded or not. */
inline Handle& anyHandleArg(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsExternal() || !info[0].As<Napi::Object>().CheckTypeTag(&ZKEY_TAG)) {
    throw invalid(info.Env(), "expected a zkey handle from loadZkey");
  }
  return *info[0].As<Napi::External<Handle>>().Data();
}

/** A handle that still holds its key. */
inline Handle& handleArg(const Napi::CallbackInfo& info) {
  Handle& h = anyHandleArg(info);
  if (!h.impl) throw invalid(info.Env(), "the zkey handle was unloaded");
  return h;
}

}  // namespace node
}  // namespace mzk
