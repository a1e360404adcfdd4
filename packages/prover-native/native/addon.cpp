// Node-API glue for the native Groth16 prover: zkey handles (load, unload, the per-process cache),
// prove (sync, for worker threads, and async on the libuv pool), thread priority, and the test
// entry points. All validation errors
// become JavaScript Errors with a `code`; nothing here aborts the process.
#include <napi.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "kernel.hpp"
#include "points.hpp"
#include "r1cs.hpp"
#include "setup.hpp"
#include "sha256.hpp"
#include "table_cache.hpp"
#include "verify.hpp"

namespace {

using mzk::Kernel;
using mzk::ZKeyImpl;

// --- Kernel choice ---------------------------------------------------------------------------

bool cpuHasAdx() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("adx");
#else
  return false;
#endif
}

const Kernel* kernelNamed(const std::string& name) {
  if (name == "generic") return &mzk::kernelGeneric();
  if (name == "adx" && mzk::kernelAdx() != nullptr && cpuHasAdx()) return mzk::kernelAdx();
  return nullptr;
}

/** BMI2/ADX where the CPU has them, else generic; MZK_NATIVE_KERNEL=generic|adx overrides. */
const Kernel& defaultKernel() {
  static const Kernel* chosen = [] {
    const char* env = std::getenv("MZK_NATIVE_KERNEL");
    if (env != nullptr && *env != 0) {
      const Kernel* k = kernelNamed(env);
      if (k != nullptr) return k;
    }
    const Kernel* adx = kernelNamed("adx");
    return adx != nullptr ? adx : &mzk::kernelGeneric();
  }();
  return *chosen;
}

// --- Errors ----------------------------------------------------------------------------------

Napi::Error errorWithCode(Napi::Env env, const std::string& message, const char* code) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  return e;
}

/**
 * Throws `error` into JavaScript, quietly giving up where that is impossible: a worker thread being
 * terminated cannot run JavaScript any more (see also NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS).
 */
void throwIntoJs(const Napi::Error& error) {
  try {
    error.ThrowAsJavaScriptException();
  } catch (...) {
  }
}

void throwIntoJs(Napi::Env env, const std::string& message, const char* code) {
  try {
    throwIntoJs(errorWithCode(env, message, code));
  } catch (...) {
  }
}

/** A file the addon was asked to read could not be opened, read or mapped. */
struct IoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  } catch (const mzk::InputError& e) {
    throwIntoJs(env, e.what(), "MZK_INVALID_INPUT");
  } catch (const mzk::Cancelled& e) {
    throwIntoJs(env, e.what(), "MZK_CANCELLED");
  } catch (const IoError& e) {
    throwIntoJs(env, e.what(), "MZK_IO");
  } catch (const mzk::OutOfBudget& e) {
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

// --- ZKey handles ----------------------------------------------------------------------------

/** A handle's `impl` is empty once unloaded: every later use is refused instead of proving. */
struct Handle {
  std::shared_ptr<ZKeyImpl> impl;
  const Kernel* kernel;
};

const napi_type_tag ZKEY_TAG = {0x6d7a6b5f7a6b6579ULL, 0x1f6a3c0e9b2d4471ULL};

/**
 * Loaded keys by content, so every pool thread shares one copy (and one set of tables). Entries
 * are weak: a key lives while a handle (or a proof in flight) holds it, so a key every thread has
 * unloaded is freed at once, not at the next garbage collection.
 */
std::mutex cacheMutex;
std::map<std::string, std::weak_ptr<ZKeyImpl>> cache;

/** Keys alive in the process and their table bytes, so callers can see that an unload freed memory. */
std::atomic<int64_t> liveKeys{0};
std::atomic<int64_t> liveTableBytes{0};
std::atomic<int64_t> liveMappedBytes{0};

/** Counts a freshly loaded key as live until its last owner lets go of it. */
std::shared_ptr<ZKeyImpl> tracked(std::shared_ptr<ZKeyImpl> impl) {
  const mzk::ZKeyInfo i = impl->info();
  const int64_t bytes = (int64_t)i.tableBytes, mapped = (int64_t)i.tableBytesMapped;
  liveKeys++;
  liveTableBytes += bytes;
  liveMappedBytes += mapped;
  ZKeyImpl* raw = impl.get();
  struct Release {
    std::shared_ptr<ZKeyImpl> owner;
    int64_t bytes, mapped;
    void operator()(ZKeyImpl*) {
      owner.reset();
      liveKeys--;
      liveTableBytes -= bytes;
      liveMappedBytes -= mapped;
    }
  };
  return std::shared_ptr<ZKeyImpl>(raw, Release{std::move(impl), bytes, mapped});
}

/** Drops the cache's entries for keys nobody holds any more (call with cacheMutex held). */
void pruneCache() {
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
}

uint64_t contentHash(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

Napi::Uint8Array bytesArg(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    throw errorWithCode(info.Env(), std::string(name) + " must be a Uint8Array", "MZK_INVALID_INPUT");
  }
  return info[i].As<Napi::Uint8Array>();
}

Napi::Object optionsArg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() > i && info[i].IsObject()) return info[i].As<Napi::Object>();
  return Napi::Object::New(info.Env());
}

int64_t intOption(const Napi::Object& o, const char* key, int64_t fallback, int64_t min, int64_t max) {
  if (!o.Has(key) || o.Get(key).IsUndefined()) return fallback;
  const Napi::Value v = o.Get(key);
  if (!v.IsNumber()) throw errorWithCode(o.Env(), std::string("option ") + key + " must be a number", "MZK_INVALID_INPUT");
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= (double)min && d <= (double)max) || d != (double)(int64_t)d) {
    throw errorWithCode(o.Env(), std::string("option ") + key + " out of range", "MZK_INVALID_INPUT");
  }
  return (int64_t)d;
}

const Kernel& kernelOption(const Napi::Object& o) {
  if (!o.Has("kernel") || o.Get("kernel").IsUndefined()) return defaultKernel();
  const std::string name = o.Get("kernel").ToString();
  const Kernel* k = kernelNamed(name);
  if (k == nullptr) throw errorWithCode(o.Env(), "kernel " + name + " is not available on this CPU/build", "MZK_INVALID_INPUT");
  return *k;
}

Handle& anyHandleArg(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsExternal() || !info[0].As<Napi::Object>().CheckTypeTag(&ZKEY_TAG)) {
    throw errorWithCode(info.Env(), "expected a zkey handle from loadZkey", "MZK_INVALID_INPUT");
  }
  return *info[0].As<Napi::External<Handle>>().Data();
}

/** A handle that still holds its key. */
Handle& handleArg(const Napi::CallbackInfo& info) {
  Handle& h = anyHandleArg(info);
  if (!h.impl) throw errorWithCode(info.Env(), "the zkey handle was unloaded", "MZK_INVALID_INPUT");
  return h;
}

/** The load options both loaders take. */
mzk::LoadOptions loadOptions(const Napi::Object& o) {
  mzk::LoadOptions options;
  options.threads = (int)intOption(o, "threads", 1, 1, 1024);
  options.tableBudget = (size_t)intOption(o, "tableBudgetMB", 1024, 0, 1 << 20) << 20;
  options.forceC = (int)intOption(o, "forceC", 0, 0, 15);
  options.forceCopies = (int)intOption(o, "forceCopies", 0, 0, 64);
  options.memoryBudget = (size_t)intOption(o, "memoryBudgetMB", 0, 0, 1 << 24) << 20;
  options.proofsInFlight = (int)intOption(o, "proofsInFlight", 1, 1, 1024);
  if (o.Has("overBudget") && !o.Get("overBudget").IsUndefined()) {
    const std::string mode = o.Get("overBudget").ToString();
    if (mode != "refuse" && mode != "least") throw errorWithCode(o.Env(), "option overBudget must be \"refuse\" or \"least\"", "MZK_INVALID_INPUT");
    options.refuseOverBudget = mode == "refuse";
  }
  return options;
}

/** The table cache named by the options (tableCacheDir, tableCacheMaxMB), for the key of `digest`. */
void tableCacheOption(const Napi::Object& o, const Kernel& kernel, const std::string& digest, mzk::LoadOptions& options) {
  if (!o.Has("tableCacheDir") || o.Get("tableCacheDir").IsUndefined()) return;
  if (!o.Get("tableCacheDir").IsString()) throw errorWithCode(o.Env(), "option tableCacheDir must be a string", "MZK_INVALID_INPUT");
  const std::string dir = o.Get("tableCacheDir").As<Napi::String>().Utf8Value();
  if (dir.empty()) throw errorWithCode(o.Env(), "option tableCacheDir must not be empty", "MZK_INVALID_INPUT");
  const uint64_t maxBytes = (uint64_t)intOption(o, "tableCacheMaxMB", 4096, 0, 1LL << 30) << 20;
  options.tableStore = std::make_shared<mzk::TableCache>(dir, digest, kernel.name, maxBytes);
}

/**
 * The key named `content` (with these options and kernel) from the per-process cache, else made by
 * `load` and cached while anyone holds it. One load at a time: a second thread asking for the same
 * key waits and then shares it.
 */
template <class Load>
Napi::Value handleFor(Napi::Env env, const Kernel& kernel, const mzk::LoadOptions& options, bool useCache, const std::string& content, Load&& load) {
  std::shared_ptr<ZKeyImpl> impl;
  if (useCache) {
    const std::string key = std::string(kernel.name) + ":" + content + ":" + std::to_string(options.tableBudget) + ":" +
                            std::to_string(options.forceC) + ":" + std::to_string(options.forceCopies) + ":" +
                            std::to_string(options.memoryBudget) + ":" + std::to_string(options.proofsInFlight) + ":" +
                            std::to_string(options.refuseOverBudget);
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(key);
    if (it != cache.end()) impl = it->second.lock();
    if (!impl) {
      pruneCache();
      impl = tracked(load());
      cache[key] = impl;
    }
  } else {
    impl = tracked(load());
  }
  auto* handle = new Handle{impl, &kernel};
  Napi::External<Handle> ext = Napi::External<Handle>::New(env, handle, [](Napi::Env, Handle* h) { delete h; });
  ext.TypeTag(&ZKEY_TAG);
  return ext;
}

bool cacheOption(const Napi::Object& o) { return !(o.Has("cache") && o.Get("cache").ToBoolean() == false); }

/** loadZkey(bytes, { threads?, tableBudgetMB?, kernel?, cache?, cacheKey?, forceC?, forceCopies? }) */
Napi::Value LoadZkey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Napi::Uint8Array bytes = bytesArg(info, 0, "zkey");
    const Napi::Object o = optionsArg(info, 1);
    mzk::LoadOptions options = loadOptions(o);
    // The content hash below is fast but not collision-resistant: where keys come from uploads, the
    // caller names the bytes by their SHA-256 so a crafted key cannot be served in another's place.
    std::string cacheKey;
    if (o.Has("cacheKey") && !o.Get("cacheKey").IsUndefined()) {
      if (!o.Get("cacheKey").IsString()) throw errorWithCode(env, "option cacheKey must be a string", "MZK_INVALID_INPUT");
      cacheKey = o.Get("cacheKey").As<Napi::String>().Utf8Value();
      if (cacheKey.empty()) throw errorWithCode(env, "option cacheKey must not be empty", "MZK_INVALID_INPUT");
    }
    const Kernel& kernel = kernelOption(o);
    const uint8_t* data = bytes.Data();
    const size_t length = bytes.ByteLength();
    const std::string content = std::to_string(length) + ":" + (cacheKey.empty() ? "h" + std::to_string(contentHash(data, length)) : "k" + cacheKey);
    return handleFor(env, kernel, options, cacheOption(o), content, [&] {
      if (o.Has("tableCacheDir") && !o.Get("tableCacheDir").IsUndefined()) {
        mzk::Sha256 hash;
        hash.update(data, length);
        tableCacheOption(o, kernel, mzk::Sha256::hex(hash.digest()), options);
      }
      return kernel.load(data, length, options);
    });
  });
}

/** A file mapped read-only for as long as it is in scope. */
struct MappedFile {
  const uint8_t* data = nullptr;
  size_t length = 0;
  explicit MappedFile(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IoError("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      const int e = errno;
      close(fd);
      throw IoError("cannot read " + path + ": " + std::strerror(e));
    }
    length = (size_t)st.st_size;
    if (length > 0) {
      void* p = mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
      const int e = errno;
      close(fd);
      if (p == MAP_FAILED) throw IoError("cannot map " + path + ": " + std::strerror(e));
      madvise(p, length, MADV_SEQUENTIAL);
      data = static_cast<const uint8_t*>(p);
    } else {
      close(fd);
    }
  }
  ~MappedFile() {
    if (data != nullptr) munmap(const_cast<uint8_t*>(data), length);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
};

/**
 * loadZkeyFile(path, { sha256, threads?, tableBudgetMB?, kernel?, cache?, forceC?, forceCopies? }):
 * a key read by the addon from a file (mapped, never copied into JavaScript), named in the cache by
 * its SHA-256: a cached key is served without reading the file at all, and a file read is hashed
 * first and refused (MZK_DIGEST_MISMATCH) when it does not hold the bytes of that digest.
 */
Napi::Value LoadZkeyFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsString()) throw errorWithCode(env, "path must be a string", "MZK_INVALID_INPUT");
    const std::string path = info[0].As<Napi::String>().Utf8Value();
    const Napi::Object o = optionsArg(info, 1);
    const Napi::Value digestValue = o.Get("sha256");
    const std::string digest = digestValue.IsString() ? digestValue.As<Napi::String>().Utf8Value() : "";
    if (digest.size() != 64 || digest.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw errorWithCode(env, "option sha256 must be 64 lowercase hex digits", "MZK_INVALID_INPUT");
    }
    mzk::LoadOptions options = loadOptions(o);
    const Kernel& kernel = kernelOption(o);
    tableCacheOption(o, kernel, digest, options);
    options.releaseInput = true;
    return handleFor(env, kernel, options, cacheOption(o), "s" + digest, [&] {
      MappedFile file(path);
      mzk::Sha256 hash;
      // Pages hashed are dropped as the hash goes, so a large key is never resident whole; the
      // kernel reads each section again (from the page cache) and drops it once parsed.
      constexpr size_t STEP = (size_t)16 << 20;
      for (size_t at = 0; at < file.length; at += STEP) {
        const size_t n = std::min(STEP, file.length - at);
        hash.update(file.data + at, n);
        madvise(const_cast<uint8_t*>(file.data) + at, n, MADV_DONTNEED);
      }
      if (mzk::Sha256::hex(hash.digest()) != digest) {
        throw errorWithCode(env, "the file " + path + " does not hold the bytes of its digest " + digest, "MZK_DIGEST_MISMATCH");
      }
      return kernel.load(file.data, file.length, options);
    });
  });
}

/**
 * sha256(bytes, portable?): the digest, lowercase hex (the one loadZkeyFile checks files against);
 * `portable` skips the CPU's SHA extensions, so tests check both ways of computing it.
 */
Napi::Value Sha256Hex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Napi::Uint8Array bytes = bytesArg(info, 0, "bytes");
    mzk::Sha256 hash(info.Length() > 1 && info[1].ToBoolean());
    hash.update(bytes.Data(), bytes.ByteLength());
    return Napi::String::New(env, mzk::Sha256::hex(hash.digest()));
  });
}

/**
 * unloadZkey(handle): lets go of the handle's key at once instead of at garbage collection; the key
 * is freed when no other handle (another thread's) and no proof in flight holds it. The handle is
 * invalid afterwards; unloading it again does nothing.
 */
Napi::Value UnloadZkey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    Handle& h = anyHandleArg(info);
    h.impl.reset();
    std::lock_guard<std::mutex> lock(cacheMutex);
    pruneCache();
    return env.Undefined();
  });
}

/** memoryStats(): the keys alive in this process (every thread's) and their MSM tables' bytes. */
Napi::Value MemoryStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    Napi::Object o = Napi::Object::New(env);
    o.Set("zkeys", (double)liveKeys.load());
    o.Set("tableBytes", (double)liveTableBytes.load());
    o.Set("tableBytesMapped", (double)liveMappedBytes.load());
    o.Set("tableBytesBuilt", (double)(liveTableBytes.load() - liveMappedBytes.load()));
    return o;
  });
}

Napi::Value ZkeyInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Handle& h = handleArg(info);
    const mzk::ZKeyInfo i = h.impl->info();
    Napi::Object o = Napi::Object::New(env);
    o.Set("kernel", h.kernel->name);
    o.Set("nVars", i.nVars);
    o.Set("nPublic", i.nPublic);
    o.Set("domainSize", i.domainSize);
    o.Set("tableBytes", (double)i.tableBytes);
    o.Set("tableBytesMapped", (double)i.tableBytesMapped);
    o.Set("residentBytes", (double)i.residentBytes);
    o.Set("scratchBytes", (double)i.scratchBytes);
    o.Set("tableCache", i.tableCache);
    o.Set("overBudget", i.overBudget);
    Napi::Object plans = Napi::Object::New(env);
    const char* names[5] = {"A", "B1", "B2", "C", "H"};
    for (int k = 0; k < 5; k++) {
      Napi::Object p = Napi::Object::New(env);
      p.Set("c", i.plans[k].c);
      p.Set("copies", i.plans[k].copies);
      p.Set("rounds", i.plans[k].rounds);
      plans.Set(names[k], p);
    }
    o.Set("msm", plans);
    return o;
  });
}

Napi::Array strings(Napi::Env env, const std::vector<std::string>& xs) {
  Napi::Array a = Napi::Array::New(env, xs.size());
  for (size_t i = 0; i < xs.size(); i++) a.Set((uint32_t)i, Napi::String::New(env, xs[i]));
  return a;
}

Napi::Object proofObject(Napi::Env env, const mzk::ProofOut& out, bool timings) {
  Napi::Object proof = Napi::Object::New(env);
  proof.Set("pi_a", strings(env, out.piA));
  Napi::Array b = Napi::Array::New(env, out.piB.size());
  for (size_t i = 0; i < out.piB.size(); i++) b.Set((uint32_t)i, strings(env, out.piB[i]));
  proof.Set("pi_b", b);
  proof.Set("pi_c", strings(env, out.piC));
  proof.Set("protocol", "groth16");
  proof.Set("curve", "bn128");
  Napi::Object result = Napi::Object::New(env);
  result.Set("proof", proof);
  result.Set("publicSignals", strings(env, out.publicSignals));
  if (timings) {
    Napi::Object t = Napi::Object::New(env);
    const char* names[9] = {"witness", "abc", "ntt", "msmA", "msmB1", "msmB2", "msmC", "msmH", "finish"};
    for (int k = 0; k < 9; k++) t.Set(names[k], out.phaseMs[k]);
    result.Set("timings", t);
  }
  return result;
}

struct ProveArgs {
  mzk::ProveOptions options;
  bool timings = false;
  Napi::Reference<Napi::Int32Array> cancelRef;
};

void readProveOptions(const Napi::CallbackInfo& info, size_t i, ProveArgs& args) {
  const Napi::Object o = optionsArg(info, i);
  args.options.threads = (int)intOption(o, "threads", 1, 1, 1024);
  args.timings = o.Has("timings") && o.Get("timings").ToBoolean();
  if (o.Has("cancel") && !o.Get("cancel").IsUndefined()) {
    const Napi::Value v = o.Get("cancel");
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array || v.As<Napi::Int32Array>().ElementLength() < 1) {
      throw errorWithCode(info.Env(), "option cancel must be an Int32Array (on a SharedArrayBuffer)", "MZK_INVALID_INPUT");
    }
    const Napi::Int32Array flag = v.As<Napi::Int32Array>();
    args.options.cancel.flag = flag.Data();
    args.cancelRef = Napi::Persistent(flag);
  }
}

/** prove(zkey, wtns, { threads?, cancel?, timings? }): synchronous; for worker threads. */
Napi::Value Prove(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Handle& h = handleArg(info);
    const Napi::Uint8Array wtns = bytesArg(info, 1, "witness");
    ProveArgs args;
    readProveOptions(info, 2, args);
    mzk::ProofOut out;
    h.impl->prove(wtns.Data(), wtns.ByteLength(), args.options, out);
    return proofObject(env, out, args.timings);
  });
}

class ProveWorker : public Napi::AsyncWorker {
 public:
  ProveWorker(Napi::Env env, std::shared_ptr<ZKeyImpl> impl, std::vector<uint8_t> wtns, ProveArgs&& args)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), impl_(std::move(impl)), wtns_(std::move(wtns)),
        args_(std::move(args)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      impl_->prove(wtns_.data(), wtns_.size(), args_.options, out_);
    } catch (const mzk::InputError& e) {
      code_ = "MZK_INVALID_INPUT";
      SetError(e.what());
    } catch (const mzk::Cancelled& e) {
      code_ = "MZK_CANCELLED";
      SetError(e.what());
    } catch (const std::bad_alloc&) {
      code_ = "MZK_OUT_OF_MEMORY";
      SetError("out of memory");
    } catch (const std::exception& e) {
      code_ = "MZK_INTERNAL";
      SetError(e.what());
    }
  }
  void OnOK() override {
    try {
      deferred_.Resolve(proofObject(Env(), out_, args_.timings));
    } catch (...) {
    }
  }
  void OnError(const Napi::Error& e) override {
    try {
      deferred_.Reject(errorWithCode(Env(), e.Message(), code_).Value());
    } catch (...) {
    }
  }

 private:
  Napi::Promise::Deferred deferred_;
  std::shared_ptr<ZKeyImpl> impl_;
  std::vector<uint8_t> wtns_;  // a copy: the caller's buffer may change or be detached meanwhile
  ProveArgs args_;
  mzk::ProofOut out_;
  const char* code_ = "MZK_INTERNAL";
};

/** proveAsync(zkey, wtns, options): the same on the libuv thread pool; resolves with the proof. */
Napi::Value ProveAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Handle& h = handleArg(info);
    const Napi::Uint8Array wtns = bytesArg(info, 1, "witness");
    ProveArgs args;
    readProveOptions(info, 2, args);
    auto* worker = new ProveWorker(env, h.impl, std::vector<uint8_t>(wtns.Data(), wtns.Data() + wtns.ByteLength()), std::move(args));
    Napi::Promise p = worker->promise();
    worker->Queue();
    return p;
  });
}

/**
 * setThreadPriority(nice, idle?): lowers the calling thread's CPU priority (Linux: per-thread nice,
 * and SCHED_IDLE when idle is true); its proof helpers are restarted, so they have it too. Returns false where the
 * platform does not allow it. Raising priority back is not possible without privileges.
 */
Napi::Value SetThreadPriority(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsNumber()) throw errorWithCode(env, "nice must be a number", "MZK_INVALID_INPUT");
    const int nice = info[0].As<Napi::Number>().Int32Value();
    const bool idle = info.Length() > 1 && info[1].ToBoolean();
    // Helpers already started keep the priority they were started with.
    mzk::resetTeam();
#if defined(__linux__)
    const pid_t tid = (pid_t)syscall(SYS_gettid);
    bool ok = setpriority(PRIO_PROCESS, (id_t)tid, nice) == 0;
    if (idle) {
      sched_param param{};
      param.sched_priority = 0;
      ok = sched_setscheduler(tid, SCHED_IDLE, &param) == 0 && ok;
    }
    return Napi::Boolean::New(env, ok);
#else
    (void)nice;
    (void)idle;
    return Napi::Boolean::New(env, false);
#endif
  });
}

/**
 * checkZkeyPoints(bytes, { threads?, kernel? }): every point of a zkey checked (G1 on the curve, G2
 * on the twist and in G2); { g1, g2 } counts, or MZK_INVALID_INPUT naming the first bad point.
 */
Napi::Value CheckZkeyPoints(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const Napi::Uint8Array bytes = bytesArg(info, 0, "zkey");
    const Napi::Object o = optionsArg(info, 1);
    const int threads = (int)intOption(o, "threads", 1, 1, 1024);
    const mzk::CheckZkeyPoints adx = std::string(kernelOption(o).name) == "adx" ? mzk::checkZkeyPointsAdx() : nullptr;
    const mzk::PointCount n = (adx != nullptr ? adx : mzk::checkZkeyPointsGeneric())(bytes.Data(), bytes.ByteLength(), threads);
    Napi::Object out = Napi::Object::New(env);
    out.Set("g1", (double)n.g1);
    out.Set("g2", (double)n.g2);
    return out;
  });
}

// --- Development setup -----------------------------------------------------------------------

/**
 * setupDevelopment(r1csPath, zkeyPath, { hashToG2, threads?, ptauPath?, name?, kernel? }): a Groth16
 * key from fresh toxic waste (setup_dev.hpp); blocks the calling thread. hashToG2(transcript) is
 * called once, synchronously, on this thread.
 */
Napi::Value SetupDevelopment(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
      throw errorWithCode(env, "setupDevelopment(r1csPath, zkeyPath, options): paths must be strings", "MZK_INVALID_INPUT");
    }
    const Napi::Object o = optionsArg(info, 2);
    mzk::DevSetupOptions options;
    options.r1csPath = info[0].As<Napi::String>().Utf8Value();
    options.zkeyPath = info[1].As<Napi::String>().Utf8Value();
    options.threads = (int)intOption(o, "threads", 1, 1, 1024);
    if (o.Has("ptauPath") && !o.Get("ptauPath").IsUndefined()) {
      if (!o.Get("ptauPath").IsString()) throw errorWithCode(env, "option ptauPath must be a string", "MZK_INVALID_INPUT");
      options.ptauPath = o.Get("ptauPath").As<Napi::String>().Utf8Value();
    }
    if (o.Has("name") && !o.Get("name").IsUndefined()) {
      if (!o.Get("name").IsString()) throw errorWithCode(env, "option name must be a string", "MZK_INVALID_INPUT");
      options.contributionName = o.Get("name").As<Napi::String>().Utf8Value();
    }
    if (!o.Get("hashToG2").IsFunction()) throw errorWithCode(env, "option hashToG2 must be a function", "MZK_INVALID_INPUT");
    const Napi::Function hashToG2 = o.Get("hashToG2").As<Napi::Function>();
    options.hashToG2 = [&](const uint8_t* transcript, uint8_t* out) {
      Napi::Uint8Array t = Napi::Uint8Array::New(env, 64);
      std::memcpy(t.Data(), transcript, 64);
      const Napi::Value r = hashToG2.Call({t});
      if (!r.IsTypedArray() || r.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || r.As<Napi::Uint8Array>().ByteLength() != 128) {
        throw errorWithCode(env, "hashToG2 must return a Uint8Array of 128 bytes", "MZK_INVALID_INPUT");
      }
      std::memcpy(out, r.As<Napi::Uint8Array>().Data(), 128);
    };
    const mzk::SetupDevelopment adx = std::string(kernelOption(o).name) == "adx" ? mzk::setupDevelopmentAdx() : nullptr;
    mzk::DevSetupResult res;
    try {
      res = (adx != nullptr ? adx : mzk::setupDevelopmentGeneric())(options);
    } catch (const mzk::FileError& e) {
      throw IoError(e.what());
    }
    static const char* HEX = "0123456789abcdef";
    std::string csHash;
    for (uint8_t b : res.csHash) {
      csHash += HEX[b >> 4];
      csHash += HEX[b & 15];
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("nVars", res.nVars);
    out.Set("nPublic", res.nPublic);
    out.Set("nConstraints", res.nConstraints);
    out.Set("domainSize", res.domainSize);
    out.Set("csHash", csHash);
    if (res.ptauPower != 0) out.Set("ptauPower", res.ptauPower);
    Napi::Object ms = Napi::Object::New(env);
    ms.Set("scalars", res.msScalars);
    ms.Set("tables", res.msTables);
    ms.Set("points", res.msPoints);
    ms.Set("ptau", res.msPtau);
    out.Set("ms", ms);
    return out;
  });
}

// --- Groth16 verification --------------------------------------------------------------------

/**
 * A decimal (or 0x-hexadecimal) string, or a non-negative safe integer, below 2^256; false for
 * anything else. Whether it is below the field's modulus is the kernel's check.
 */
bool u256From(const Napi::Value& v, mzk::U256& out) {
  out = mzk::U256{{0, 0, 0, 0}};
  std::string text;
  if (v.IsNumber()) {
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0 && d <= 9007199254740991.0) || d != (double)(uint64_t)d) return false;
    out.w[0] = (uint64_t)d;
    return true;
  }
  if (!v.IsString()) return false;
  text = v.As<Napi::String>().Utf8Value();
  unsigned base = 10;
  size_t i = 0;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    i = 2;
  }
  if (i == text.size() || text.size() > 80) return false;
  for (; i < text.size(); i++) {
    const char ch = text[i];
    unsigned digit;
    if (ch >= '0' && ch <= '9') digit = (unsigned)(ch - '0');
    else if (base == 16 && ch >= 'a' && ch <= 'f') digit = (unsigned)(ch - 'a' + 10);
    else if (base == 16 && ch >= 'A' && ch <= 'F') digit = (unsigned)(ch - 'A' + 10);
    else return false;
    // out = out·base + digit, failing on a carry out of the top word.
    unsigned __int128 carry = digit;
    for (int k = 0; k < 4; k++) {
      const unsigned __int128 t = (unsigned __int128)out.w[k] * base + carry;
      out.w[k] = (uint64_t)t;
      carry = t >> 64;
    }
    if (carry != 0) return false;
  }
  return true;
}

/** An array of `min`..`max` elements, or false. */
bool arrayOf(const Napi::Value& v, uint32_t min, uint32_t max, Napi::Array& out) {
  if (!v.IsArray()) return false;
  out = v.As<Napi::Array>();
  return out.Length() >= min && out.Length() <= max;
}

const mzk::U256 U256_ONE = {{1, 0, 0, 0}};
const mzk::U256 U256_ZERO = {{0, 0, 0, 0}};

/** snarkjs's G1 [x, y] or [x, y, z]. */
bool g1From(const Napi::Value& v, mzk::G1Input& out) {
  Napi::Array a;
  if (!arrayOf(v, 2, 3, a) || !u256From(a.Get(0u), out.x) || !u256From(a.Get(1u), out.y)) return false;
  if (a.Length() == 2) {
    out.z = U256_ONE;
    return true;
  }
  return u256From(a.Get(2u), out.z);
}

bool fq2From(const Napi::Value& v, mzk::U256* out) {
  Napi::Array a;
  return arrayOf(v, 2, 2, a) && u256From(a.Get(0u), out[0]) && u256From(a.Get(1u), out[1]);
}

/** snarkjs's G2 [[x0, x1], [y0, y1]] or with a third [z0, z1]. */
bool g2From(const Napi::Value& v, mzk::G2Input& out) {
  Napi::Array a;
  if (!arrayOf(v, 2, 3, a) || !fq2From(a.Get(0u), out.x) || !fq2From(a.Get(1u), out.y)) return false;
  if (a.Length() == 2) {
    out.z[0] = U256_ONE;
    out.z[1] = U256_ZERO;
    return true;
  }
  return fq2From(a.Get(2u), out.z);
}

struct VerifyingKeyHandle {
  std::shared_ptr<mzk::PreparedVerifyingKey> key;
};

const napi_type_tag VKEY_TAG = {0x6d7a6b5f766b6579ULL, 0x5b8e21d4c7a93f06ULL};

/**
 * prepareVerifyingKey(vkey, { kernel? }): a snarkjs verification_key.json object (bn128 Groth16),
 * checked (every point canonical and on its curve, β γ δ in G2, none of α β γ δ at infinity) and
 * prepared for verifyGroth16. MZK_INVALID_INPUT names the first field that is wrong.
 */
Napi::Value PrepareVerifyingKey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const auto refuse = [&](const std::string& why) { return errorWithCode(env, "verification key: " + why, "MZK_INVALID_INPUT"); };
    if (info.Length() < 1 || !info[0].IsObject() || info[0].IsArray()) throw refuse("expected the verification key's JSON object");
    const Napi::Object vk = info[0].As<Napi::Object>();
    const auto text = [&](const char* key) { return vk.Has(key) && vk.Get(key).IsString() ? vk.Get(key).As<Napi::String>().Utf8Value() : ""; };
    if (text("protocol") != "groth16") throw refuse("protocol must be \"groth16\"");
    if (text("curve") != "bn128" && text("curve") != "bn254") throw refuse("curve must be \"bn128\"");
    mzk::VerifyingKeyInput in;
    if (!g1From(vk.Get("vk_alpha_1"), in.alpha)) throw refuse("vk_alpha_1 is not a G1 point [x, y, z] of decimal strings");
    const std::pair<const char*, mzk::G2Input*> g2s[3] = {{"vk_beta_2", &in.beta}, {"vk_gamma_2", &in.gamma}, {"vk_delta_2", &in.delta}};
    for (const auto& [name, point] : g2s)
      if (!g2From(vk.Get(name), *point)) throw refuse(std::string(name) + " is not a G2 point [[x0, x1], [y0, y1], [z0, z1]] of decimal strings");
    Napi::Array ic;
    if (!arrayOf(vk.Get("IC"), 1, 1u << 24, ic)) throw refuse("IC must be a non-empty array of G1 points");
    in.ic.resize(ic.Length());
    for (uint32_t i = 0; i < ic.Length(); i++)
      if (!g1From(ic.Get(i), in.ic[i])) throw refuse("IC[" + std::to_string(i) + "] is not a G1 point [x, y, z] of decimal strings");
    if (vk.Has("nPublic") && !vk.Get("nPublic").IsUndefined()) {
      const Napi::Value n = vk.Get("nPublic");
      if (!n.IsNumber() || n.As<Napi::Number>().DoubleValue() != (double)(ic.Length() - 1)) {
        throw refuse("nPublic does not match IC (IC has one point per public signal, plus one)");
      }
    }
    const Napi::Object o = optionsArg(info, 1);
    const bool adx = std::string(kernelOption(o).name) == "adx";
    const mzk::PrepareVerifyingKey prepare = adx ? mzk::prepareVerifyingKeyAdx() : mzk::prepareVerifyingKeyGeneric();
    auto* handle = new VerifyingKeyHandle{prepare(in)};
    Napi::External<VerifyingKeyHandle> ext =
        Napi::External<VerifyingKeyHandle>::New(env, handle, [](Napi::Env, VerifyingKeyHandle* h) { delete h; });
    ext.TypeTag(&VKEY_TAG);
    return ext;
  });
}

/**
 * verifyGroth16(key, proof, publicSignals): snarkjs 0.7's groth16.verify. False for every proof
 * that is not valid, malformed ones included (wrong shapes, bad strings, points off their curves,
 * π_B outside G2, a signal ≥ r, the wrong number of signals); throws only for a bad handle.
 */
Napi::Value VerifyGroth16(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsExternal() || !info[0].As<Napi::Object>().CheckTypeTag(&VKEY_TAG)) {
      throw errorWithCode(env, "expected a verification key handle from prepareVerifyingKey", "MZK_INVALID_INPUT");
    }
    const mzk::PreparedVerifyingKey& key = *info[0].As<Napi::External<VerifyingKeyHandle>>().Data()->key;
    const auto invalid = [&]() { return Napi::Boolean::New(env, false); };
    if (info.Length() < 3 || !info[1].IsObject() || info[1].IsArray()) return invalid();
    const Napi::Object proof = info[1].As<Napi::Object>();
    mzk::ProofInput p;
    if (!g1From(proof.Get("pi_a"), p.a) || !g2From(proof.Get("pi_b"), p.b) || !g1From(proof.Get("pi_c"), p.c)) return invalid();
    Napi::Array signals;
    if (!arrayOf(info[2], 0, 1u << 24, signals) || signals.Length() != key.nPublic()) return invalid();
    std::vector<mzk::U256> s(signals.Length());
    for (uint32_t i = 0; i < signals.Length(); i++)
      if (!u256From(signals.Get(i), s[i])) return invalid();
    return Napi::Boolean::New(env, key.verify(p, s.data(), s.size()));
  });
}

/** test(op, args: Uint8Array[], ints: number[], kernel?): the kernels' arithmetic, for tests. */
Napi::Value Test(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 3 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsArray()) {
      throw errorWithCode(env, "test(op, args, ints, kernel?)", "MZK_INVALID_INPUT");
    }
    const std::string op = info[0].As<Napi::String>();
    const Napi::Array a = info[1].As<Napi::Array>();
    std::vector<mzk::Bytes> args;
    for (uint32_t i = 0; i < a.Length(); i++) {
      const Napi::Value v = a.Get(i);
      if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
        throw errorWithCode(env, "test args must be Uint8Arrays", "MZK_INVALID_INPUT");
      }
      const Napi::Uint8Array b = v.As<Napi::Uint8Array>();
      args.push_back(mzk::Bytes{b.Data(), b.ByteLength()});
    }
    const Napi::Array n = info[2].As<Napi::Array>();
    std::vector<int64_t> ints;
    for (uint32_t i = 0; i < n.Length(); i++) ints.push_back((int64_t)n.Get(i).ToNumber().DoubleValue());
    const Kernel* kernel = &defaultKernel();
    if (info.Length() > 3 && info[3].IsString()) {
      kernel = kernelNamed(info[3].As<Napi::String>());
      if (kernel == nullptr) throw errorWithCode(env, "kernel not available", "MZK_INVALID_INPUT");
    }
    const std::vector<uint8_t> out = kernel->test(op, args, ints);
    Napi::Uint8Array result = Napi::Uint8Array::New(env, out.size());
    if (!out.empty()) std::memcpy(result.Data(), out.data(), out.size());
    return result;
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("kernel", Napi::String::New(env, defaultKernel().name));
  Napi::Array kernels = Napi::Array::New(env);
  kernels.Set(0u, Napi::String::New(env, "generic"));
  if (kernelNamed("adx") != nullptr) kernels.Set(1u, Napi::String::New(env, "adx"));
  exports.Set("kernels", kernels);
  exports.Set("loadZkey", Napi::Function::New(env, LoadZkey, "loadZkey"));
  exports.Set("loadZkeyFile", Napi::Function::New(env, LoadZkeyFile, "loadZkeyFile"));
  exports.Set("sha256", Napi::Function::New(env, Sha256Hex, "sha256"));
  exports.Set("unloadZkey", Napi::Function::New(env, UnloadZkey, "unloadZkey"));
  exports.Set("memoryStats", Napi::Function::New(env, MemoryStats, "memoryStats"));
  exports.Set("zkeyInfo", Napi::Function::New(env, ZkeyInfo, "zkeyInfo"));
  exports.Set("prove", Napi::Function::New(env, Prove, "prove"));
  exports.Set("proveAsync", Napi::Function::New(env, ProveAsync, "proveAsync"));
  exports.Set("setThreadPriority", Napi::Function::New(env, SetThreadPriority, "setThreadPriority"));
  exports.Set("checkZkeyPoints", Napi::Function::New(env, CheckZkeyPoints, "checkZkeyPoints"));
  exports.Set("setupDevelopment", Napi::Function::New(env, SetupDevelopment, "setupDevelopment"));
  exports.Set("prepareVerifyingKey", Napi::Function::New(env, PrepareVerifyingKey, "prepareVerifyingKey"));
  exports.Set("verifyGroth16", Napi::Function::New(env, VerifyGroth16, "verifyGroth16"));
  exports.Set("test", Napi::Function::New(env, Test, "test"));
  return exports;
}

}  // namespace

NODE_API_MODULE(mzk_prover, Init)
