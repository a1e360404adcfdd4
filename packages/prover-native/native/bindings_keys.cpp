// The bindings that load keys and say what is loaded: loadZkey, loadZkeyFile, sha256, unloadZkey,
// memoryStats, zkeyInfo. Keys are shared per process through a cache by content (or by SHA-256),
// so every thread of a pool proves with one copy of a key's tables.
#include <napi.h>

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "binfile.hpp"
#include "bindings.hpp"
#include "kernel.hpp"
#include "sha256.hpp"
#include "table_cache.hpp"
#include "zkey_handle.hpp"

namespace mzk {
namespace node {
namespace {

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
  const ZKeyInfo i = impl->info();
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

/** The load options both loaders take. */
LoadOptions loadOptions(const Napi::Object& o) {
  LoadOptions options;
  options.threads = (int)intOption(o, "threads", 1, 1, 1024);
  options.tableBudget = (size_t)intOption(o, "tableBudgetMB", 1024, 0, 1 << 20) << 20;
  options.forceC = (int)intOption(o, "forceC", 0, 0, 15);
  options.forceCopies = (int)intOption(o, "forceCopies", 0, 0, 64);
  options.memoryBudget = (size_t)intOption(o, "memoryBudgetMB", 0, 0, 1 << 24) << 20;
  options.proofsInFlight = (int)intOption(o, "proofsInFlight", 1, 1, 1024);
  if (hasOption(o, "overBudget")) {
    const std::string mode = o.Get("overBudget").ToString();
    if (mode != "refuse" && mode != "least") throw invalid(o.Env(), "option overBudget must be \"refuse\" or \"least\"");
    options.refuseOverBudget = mode == "refuse";
  }
  return options;
}

/** The table cache named by the options (tableCacheDir, tableCacheMaxMB), for the key of `digest`. */
void tableCacheOption(const Napi::Object& o, const Kernel& kernel, const std::string& digest, LoadOptions& options) {
  if (!hasOption(o, "tableCacheDir")) return;
  const std::string dir = stringOption(o, "tableCacheDir", "");
  if (dir.empty()) throw invalid(o.Env(), "option tableCacheDir must not be empty");
  const uint64_t maxBytes = (uint64_t)intOption(o, "tableCacheMaxMB", 4096, 0, 1LL << 30) << 20;
  options.tableStore = std::make_shared<TableCache>(dir, digest, kernel.name, maxBytes);
}

/**
 * The key named `content` (with these options and kernel) from the per-process cache, else made by
 * `load` and cached while anyone holds it. One load at a time: a second thread asking for the same
 * key waits and then shares it.
 */
template <class Load>
Napi::Value handleFor(Napi::Env env, const Kernel& kernel, const LoadOptions& options, bool useCache, const std::string& content, Load&& load) {
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
    LoadOptions options = loadOptions(o);
    // The content hash below is fast but not collision-resistant: where keys come from uploads, the
    // caller names the bytes by their SHA-256 so a crafted key cannot be served in another's place.
    const std::string cacheKey = stringOption(o, "cacheKey", "");
    if (hasOption(o, "cacheKey") && cacheKey.empty()) throw invalid(env, "option cacheKey must not be empty");
    const Kernel& kernel = kernelOption(o);
    const uint8_t* data = bytes.Data();
    const size_t length = bytes.ByteLength();
    const std::string content = std::to_string(length) + ":" + (cacheKey.empty() ? "h" + std::to_string(contentHash(data, length)) : "k" + cacheKey);
    return handleFor(env, kernel, options, cacheOption(o), content, [&] {
      if (hasOption(o, "tableCacheDir")) {
        Sha256 hash;
        hash.update(data, length);
        tableCacheOption(o, kernel, Sha256::hex(hash.digest()), options);
      }
      return kernel.load(data, length, options);
    });
  });
}

/**
 * loadZkeyFile(path, { sha256, threads?, tableBudgetMB?, kernel?, cache?, forceC?, forceCopies? }):
 * a key read by the addon from a file (mapped, never copied into JavaScript), named in the cache by
 * its SHA-256: a cached key is served without reading the file at all, and a file read is hashed
 * first and refused (MZK_DIGEST_MISMATCH) when it does not hold the bytes of that digest.
 */
Napi::Value LoadZkeyFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsString()) throw invalid(env, "path must be a string");
    const std::string path = info[0].As<Napi::String>().Utf8Value();
    const Napi::Object o = optionsArg(info, 1);
    const Napi::Value digestValue = o.Get("sha256");
    const std::string digest = digestValue.IsString() ? digestValue.As<Napi::String>().Utf8Value() : "";
    if (digest.size() != 64 || digest.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw invalid(env, "option sha256 must be 64 lowercase hex digits");
    }
    LoadOptions options = loadOptions(o);
    const Kernel& kernel = kernelOption(o);
    tableCacheOption(o, kernel, digest, options);
    options.releaseInput = true;
    return handleFor(env, kernel, options, cacheOption(o), "s" + digest, [&] {
      MappedFile file(path);
      Sha256 hash;
      // Pages hashed are dropped as the hash goes, so a large key is never resident whole; the
      // kernel reads each section again (from the page cache) and drops it once parsed.
      constexpr size_t STEP = (size_t)16 << 20;
      for (size_t at = 0; at < file.length(); at += STEP) {
        const size_t n = std::min(STEP, file.length() - at);
        hash.update(file.data() + at, n);
        madvise(const_cast<uint8_t*>(file.data()) + at, n, MADV_DONTNEED);
      }
      if (Sha256::hex(hash.digest()) != digest) {
        throw errorWithCode(env, "the file " + path + " does not hold the bytes of its digest " + digest, "MZK_DIGEST_MISMATCH");
      }
      return kernel.load(file.data(), file.length(), options);
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
    Sha256 hash(info.Length() > 1 && info[1].ToBoolean());
    hash.update(bytes.Data(), bytes.ByteLength());
    return Napi::String::New(env, Sha256::hex(hash.digest()));
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
    const ZKeyInfo i = h.impl->info();
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

}  // namespace

void registerKeys(Napi::Env env, Napi::Object exports) {
  exports.Set("loadZkey", Napi::Function::New(env, LoadZkey, "loadZkey"));
  exports.Set("loadZkeyFile", Napi::Function::New(env, LoadZkeyFile, "loadZkeyFile"));
  exports.Set("sha256", Napi::Function::New(env, Sha256Hex, "sha256"));
  exports.Set("unloadZkey", Napi::Function::New(env, UnloadZkey, "unloadZkey"));
  exports.Set("memoryStats", Napi::Function::New(env, MemoryStats, "memoryStats"));
  exports.Set("zkeyInfo", Napi::Function::New(env, ZkeyInfo, "zkeyInfo"));
}

}  // namespace node
}  // namespace mzk
