// What every Node-API binding shares (bindings_*.cpp, test_addon.cpp): the kernel a call runs on,
// C++ failures turned into JavaScript Errors with a `code`, and arguments and options read from
// JavaScript values with the same messages everywhere. Each bindings file registers its functions
// through the register* functions declared at the end; addon.cpp calls them.
#pragma once

#include <napi.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "binfile.hpp"
#include "kernel.hpp"
#include "parallel.hpp"

namespace mzk {
namespace node {

// --- Kernel choice ---------------------------------------------------------------------------

inline bool cpuHasAdx() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("adx");
#else
  return false;
#endif
}

/** The kernel of that name, where this build and this CPU have it; else nullptr. */
inline const Kernel* kernelNamed(const std::string& name) {
  if (name == "generic") return &kernelGeneric();
  if (name == "adx" && kernelAdx() != nullptr && cpuHasAdx()) return kernelAdx();
  return nullptr;
}

/** BMI2/ADX where the CPU has them, else generic; MZK_NATIVE_KERNEL=generic|adx overrides. */
inline const Kernel& defaultKernel() {
  static const Kernel* chosen = [] {
    const char* env = std::getenv("MZK_NATIVE_KERNEL");
    if (env != nullptr && *env != 0) {
      const Kernel* k = kernelNamed(env);
      if (k != nullptr) return k;
    }
    const Kernel* adx = kernelNamed("adx");
    return adx != nullptr ? adx : &kernelGeneric();
  }();
  return *chosen;
}

/** exports.kernel (the default) and exports.kernels (every one this build and CPU have). */
inline void exportKernels(Napi::Env env, Napi::Object exports) {
  exports.Set("kernel", Napi::String::New(env, defaultKernel().name));
  Napi::Array kernels = Napi::Array::New(env);
  kernels.Set(0u, Napi::String::New(env, "generic"));
  if (kernelNamed("adx") != nullptr) kernels.Set(1u, Napi::String::New(env, "adx"));
  exports.Set("kernels", kernels);
}

// --- Errors ----------------------------------------------------------------------------------

inline Napi::Error errorWithCode(Napi::Env env, const std::string& message, const char* code) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  return e;
}

/**
 * Throws `error` into JavaScript, quietly giving up where that is impossible: a worker thread being
 * terminated cannot run JavaScript any more (see also NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS).
 */
inline void throwIntoJs(const Napi::Error& error) {
  try {
    error.ThrowAsJavaScriptException();
  } catch (...) {
  }
}

inline void throwIntoJs(Napi::Env env, const std::string& message, const char* code) {
  try {
    throwIntoJs(errorWithCode(env, message, code));
  } catch (...) {
  }
}

/**
 * Runs fn, turning every C++ failure into a JavaScript Error with a code. Nothing is rethrown as
 * a C++ exception past this point, so a failure can never reach std::terminate.
 */
template <class Fn>
Napi::Value guarded(Napi::Env env, Fn&& fn) {
  try {
    return fn();
  } catch (const Napi::Error& e) {
    throwIntoJs(e);
  } catch (const InputError& e) {
    throwIntoJs(env, e.what(), "MZK_INVALID_INPUT");
  } catch (const Cancelled& e) {
    throwIntoJs(env, e.what(), "MZK_CANCELLED");
  } catch (const FileError& e) {
    throwIntoJs(env, e.what(), "MZK_IO");
  } catch (const OutOfBudget& e) {
    throwIntoJs(env, e.what(), "MZK_OUT_OF_MEMORY");
  } catch (const std::bad_alloc&) {
    throwIntoJs(env, "out of memory", "MZK_OUT_OF_MEMORY");
  } catch (const std::exception& e) {
    throwIntoJs(env, e.what(), "MZK_INTERNAL");
  } catch (...) {
    throwIntoJs(env, "unknown failure", "MZK_INTERNAL");
  }
  return Napi::Value();
}

/** A malformed argument: MZK_INVALID_INPUT with this message. */
inline Napi::Error invalid(Napi::Env env, const std::string& message) { return errorWithCode(env, message, "MZK_INVALID_INPUT"); }

// --- Arguments and options -------------------------------------------------------------------

inline Napi::Uint8Array bytesArg(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw invalid(info.Env(), std::string(name) + " must be a Uint8Array");
  }
  return info[i].As<Napi::Uint8Array>();
}

/** The options object at `i`, or an empty one where there is none. */
inline Napi::Object optionsArg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() > i && info[i].IsObject()) return info[i].As<Napi::Object>();
  return Napi::Object::New(info.Env());
}

inline bool hasOption(const Napi::Object& o, const char* key) { return o.Has(key) && !o.Get(key).IsUndefined(); }

inline int64_t intOption(const Napi::Object& o, const char* key, int64_t fallback, int64_t min, int64_t max) {
  if (!hasOption(o, key)) return fallback;
  const Napi::Value v = o.Get(key);
  if (!v.IsNumber()) throw invalid(o.Env(), std::string("option ") + key + " must be a number");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= (double)min && d <= (double)max) || d != (double)(int64_t)d) throw invalid(o.Env(), std::string("option ") + key + " out of range");
  return (int64_t)d;
}

/** The string option `key`, or `fallback` where it is absent; a present one must be a string. */
inline std::string stringOption(const Napi::Object& o, const char* key, const std::string& fallback) {
  if (!hasOption(o, key)) return fallback;
  if (!o.Get(key).IsString()) throw invalid(o.Env(), std::string("option ") + key + " must be a string");
  return o.Get(key).As<Napi::String>().Utf8Value();
}

/** The function option `key`, which must be there. */
inline Napi::Function functionOption(const Napi::Object& o, const char* key) {
  if (!o.Get(key).IsFunction()) throw invalid(o.Env(), std::string("option ") + key + " must be a function");
  return o.Get(key).As<Napi::Function>();
}

/** options.kernel, or the default kernel where it is absent. */
inline const Kernel& kernelOption(const Napi::Object& o) {
  if (!hasOption(o, "kernel")) return defaultKernel();
  const std::string name = o.Get("kernel").ToString();
  const Kernel* k = kernelNamed(name);
  if (k == nullptr) throw invalid(o.Env(), "kernel " + name + " is not available on this CPU/build");
  return *k;
}

/** Whether options.kernel chose the ADX build of a per-kernel entry point (setup, phase 2, points, verifier). */
inline bool adxOption(const Napi::Object& o) { return std::string(kernelOption(o).name) == "adx"; }

// --- Registration ----------------------------------------------------------------------------

/** loadZkey, loadZkeyFile, sha256, unloadZkey, memoryStats, zkeyInfo (bindings_keys.cpp). */
void registerKeys(Napi::Env env, Napi::Object exports);
/** prove, proveAsync, setThreadPriority (bindings_prove.cpp). */
void registerProve(Napi::Env env, Napi::Object exports);
/** checkZkeyPoints (bindings_points.cpp). */
void registerPoints(Napi::Env env, Napi::Object exports);
/** phase2NewZkey, phase2Contribute, setupDevelopment (bindings_setup.cpp). */
void registerSetup(Napi::Env env, Napi::Object exports);
/** prepareVerifyingKey, verifyGroth16 (bindings_verify.cpp). */
void registerVerify(Napi::Env env, Napi::Object exports);

}  // namespace node
}  // namespace mzk
