// The bindings of the Groth16 verifier (verify.hpp): prepareVerifyingKey (a snarkjs
// verification_key.json, checked and prepared once) and verifyGroth16 (snarkjs 0.7's
// groth16.verify). JSON numbers and points are read here into plain 256-bit integers; whether each
// is below its modulus and on its curve is the kernel's check.
#include <napi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "verify.hpp"

namespace mzk {
namespace node {
namespace {

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
    const auto refuse = [&](const std::string& why) { return invalid(env, "verification key: " + why); };
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
    const mzk::PrepareVerifyingKey prepare = adxOption(o) ? mzk::prepareVerifyingKeyAdx() : mzk::prepareVerifyingKeyGeneric();
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
      throw invalid(env, "expected a verification key handle from prepareVerifyingKey");
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

}  // namespace

void registerVerify(Napi::Env env, Napi::Object exports) {
  exports.Set("prepareVerifyingKey", Napi::Function::New(env, PrepareVerifyingKey, "prepareVerifyingKey"));
  exports.Set("verifyGroth16", Napi::Function::New(env, VerifyGroth16, "verifyGroth16"));
}

}  // namespace node
}  // namespace mzk
