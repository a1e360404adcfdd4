// The bindings of the Groth16 setups: phase2NewZkey and phase2Contribute (snarkjs's `zkey new`
// and `zkey contribute` from an operator's ptau, phase2.hpp) and setupDevelopment (a key from
// fresh toxic waste, setup.hpp). All block the calling thread; files are the kernels' to read and
// these bindings' to create and map.
#include <napi.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "binfile.hpp"
#include "bindings.hpp"
#include "phase2.hpp"
#include "r1cs.hpp"
#include "setup.hpp"

namespace mzk {
namespace node {
namespace {

/** The zkey being written: created, sized and mapped shared; removed again unless committed. */
struct Phase2File : mzk::Phase2Output {
  std::string path;
  int fd = -1;
  uint8_t* data = nullptr;
  size_t length = 0;
  bool committed = false;
  explicit Phase2File(std::string p) : path(std::move(p)) {}
  uint8_t* map(size_t size) override {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw FileError("cannot create " + path + ": " + std::strerror(errno));
    if (ftruncate(fd, (off_t)size) != 0) throw FileError("cannot size " + path + ": " + std::strerror(errno));
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) throw FileError("cannot map " + path + ": " + std::strerror(errno));
    data = static_cast<uint8_t*>(p);
    length = size;
    return data;
  }
  void commit() {
    if (data != nullptr && msync(data, length, MS_SYNC) != 0) throw FileError("cannot write " + path + ": " + std::strerror(errno));
    committed = true;
  }
  ~Phase2File() override {
    if (data != nullptr) munmap(data, length);
    if (fd >= 0) close(fd);
    if (!committed && fd >= 0) unlink(path.c_str());
  }
};

/**
 * phase2NewZkey(r1csPath, ptauPath, zkeyPath, { threads?, kernel?, pastEnd? }): snarkjs's `zkey new`,
 * natively and byte for byte; both inputs mapped, the ptau read only where the circuit needs it
 * (pastEnd: see phase2.hpp). Blocks.
 */
Napi::Value Phase2NewZkey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    for (size_t i = 0; i < 3; i++)
      if (info.Length() <= i || !info[i].IsString()) throw invalid(env, "r1cs, ptau and zkey paths must be strings");
    const Napi::Object o = optionsArg(info, 3);
    const int threads = (int)intOption(o, "threads", 1, 1, 1024);
    const mzk::NewZkey adx = adxOption(o) ? mzk::newZkeyAdx() : nullptr;
    std::vector<uint8_t> pastEnd;
    if (hasOption(o, "pastEnd")) {
      if (!o.Get("pastEnd").IsTypedArray() || o.Get("pastEnd").As<Napi::Uint8Array>().ByteLength() != 64)
        throw invalid(env, "option pastEnd must be 64 bytes");
      const Napi::Uint8Array b = o.Get("pastEnd").As<Napi::Uint8Array>();
      pastEnd.assign(b.Data(), b.Data() + 64);
    }
    const mzk::R1cs r1cs(info[0].As<Napi::String>().Utf8Value());
    const MappedFile ptau(info[1].As<Napi::String>().Utf8Value());
    // Only the sections the circuit needs are touched; read-ahead over the rest would be wasted.
    madvise(const_cast<uint8_t*>(ptau.data()), ptau.length(), MADV_RANDOM);
    Phase2File out(info[2].As<Napi::String>().Utf8Value());
    const mzk::Phase2Info r =
        (adx != nullptr ? adx : mzk::newZkeyGeneric())(r1cs, ptau.data(), ptau.length(), out, threads, pastEnd.empty() ? nullptr : pastEnd.data());
    out.commit();
    Napi::Object result = Napi::Object::New(env);
    result.Set("csHash", Napi::Buffer<uint8_t>::Copy(env, r.csHash, 64));
    result.Set("nVars", (double)r.nVars);
    result.Set("nPublic", (double)r.nPublic);
    result.Set("nConstraints", (double)r.nConstraints);
    result.Set("domainSize", (double)r.domainSize);
    result.Set("power", (double)r.power);
    result.Set("bytes", (double)r.bytes);
    return result;
  });
}

/**
 * phase2Contribute(zkeyPath, { hashToG2, threads?, kernel? }): one contribution applied to the key in
 * place (phase2.hpp); hashToG2(g1s, g1sx) is called once, synchronously, and returns g2_sp (128
 * bytes). Returns the record's points { g1s, g1sx, deltaAfter, g2spx } (Montgomery LE); section 10
 * is the caller's to extend.
 */
Napi::Value Phase2Contribute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsString()) throw invalid(env, "zkey path must be a string");
    const Napi::Object o = optionsArg(info, 1);
    const Napi::Function hashToG2 = functionOption(o, "hashToG2");
    const int threads = (int)intOption(o, "threads", 1, 1, 1024);
    const mzk::Contribute adx = adxOption(o) ? mzk::contributeAdx() : nullptr;
    const std::string path = info[0].As<Napi::String>().Utf8Value();
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw FileError("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
      close(fd);
      throw FileError("cannot read " + path);
    }
    const size_t length = (size_t)st.st_size;
    void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) throw FileError("cannot map " + path + ": " + std::strerror(errno));
    struct Unmap {
      void* p;
      size_t n;
      ~Unmap() { munmap(p, n); }
    } unmap{p, length};
    mzk::Phase2Contribution c{};
    const mzk::HashToG2 callback = [&](const uint8_t* g1s, const uint8_t* g1sx, uint8_t* g2sp) {
      const Napi::Value r = hashToG2.Call({Napi::Buffer<uint8_t>::Copy(env, g1s, 64), Napi::Buffer<uint8_t>::Copy(env, g1sx, 64)});
      if (!r.IsTypedArray() || r.As<Napi::Uint8Array>().ByteLength() != 128) throw mzk::InputError("hashToG2 must return 128 bytes");
      std::memcpy(g2sp, r.As<Napi::Uint8Array>().Data(), 128);
    };
    (adx != nullptr ? adx : mzk::contributeGeneric())(static_cast<uint8_t*>(p), length, callback, threads, c);
    if (msync(p, length, MS_SYNC) != 0) throw FileError("cannot write " + path + ": " + std::strerror(errno));
    Napi::Object out = Napi::Object::New(env);
    out.Set("g1s", Napi::Buffer<uint8_t>::Copy(env, c.g1s, 64));
    out.Set("g1sx", Napi::Buffer<uint8_t>::Copy(env, c.g1sx, 64));
    out.Set("deltaAfter", Napi::Buffer<uint8_t>::Copy(env, c.deltaAfter, 64));
    out.Set("g2spx", Napi::Buffer<uint8_t>::Copy(env, c.g2spx, 128));
    return out;
  });
}

/**
 * setupDevelopment's options: the paths, threads, the ptau to write beside the key, the
 * contribution's name and hashToG2, which the setup calls once, synchronously, on this thread.
 */
mzk::DevSetupOptions developmentSetupOptions(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
    throw invalid(env, "setupDevelopment(r1csPath, zkeyPath, options): paths must be strings");
  }
  const Napi::Object o = optionsArg(info, 2);
  mzk::DevSetupOptions options;
  options.r1csPath = info[0].As<Napi::String>().Utf8Value();
  options.zkeyPath = info[1].As<Napi::String>().Utf8Value();
  options.threads = (int)intOption(o, "threads", 1, 1, 1024);
  options.ptauPath = stringOption(o, "ptauPath", "");
  options.contributionName = stringOption(o, "name", options.contributionName);
  const Napi::Function hashToG2 = functionOption(o, "hashToG2");
  options.hashToG2 = [env, hashToG2](const uint8_t* transcript, uint8_t* out) {
    Napi::Uint8Array t = Napi::Uint8Array::New(env, 64);
    std::memcpy(t.Data(), transcript, 64);
    const Napi::Value r = hashToG2.Call({t});
    if (!r.IsTypedArray() || r.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || r.As<Napi::Uint8Array>().ByteLength() != 128) {
      throw invalid(env, "hashToG2 must return a Uint8Array of 128 bytes");
    }
    std::memcpy(out, r.As<Napi::Uint8Array>().Data(), 128);
  };
  return options;
}

/** What setupDevelopment made, as JavaScript sees it: the key's shape, csHash in hex, the phases' ms. */
Napi::Object developmentSetupResult(Napi::Env env, const mzk::DevSetupResult& res) {
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
}

/**
 * setupDevelopment(r1csPath, zkeyPath, { hashToG2, threads?, ptauPath?, name?, kernel? }): a Groth16
 * key from fresh toxic waste (setup_dev.hpp); blocks the calling thread.
 */
Napi::Value SetupDevelopment(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const mzk::DevSetupOptions options = developmentSetupOptions(info);
    const mzk::SetupDevelopment adx = adxOption(optionsArg(info, 2)) ? mzk::setupDevelopmentAdx() : nullptr;
    return developmentSetupResult(env, (adx != nullptr ? adx : mzk::setupDevelopmentGeneric())(options));
  });
}

}  // namespace

void registerSetup(Napi::Env env, Napi::Object exports) {
  exports.Set("phase2NewZkey", Napi::Function::New(env, Phase2NewZkey, "phase2NewZkey"));
  exports.Set("phase2Contribute", Napi::Function::New(env, Phase2Contribute, "phase2Contribute"));
  exports.Set("setupDevelopment", Napi::Function::New(env, SetupDevelopment, "setupDevelopment"));
}

}  // namespace node
}  // namespace mzk
