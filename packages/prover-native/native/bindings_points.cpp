// The binding of the zkey point check (points.hpp): checkZkeyPoints, which the build runs on every
// uploaded Groth16 key before accepting it.
#include <napi.h>

#include "bindings.hpp"
#include "points.hpp"

namespace mzk {
namespace node {
namespace {

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
    const mzk::CheckZkeyPoints adx = adxOption(o) ? checkZkeyPointsAdx() : nullptr;
    const PointCount n = (adx != nullptr ? adx : checkZkeyPointsGeneric())(bytes.Data(), bytes.ByteLength(), threads);
    Napi::Object out = Napi::Object::New(env);
    out.Set("g1", (double)n.g1);
    out.Set("g2", (double)n.g2);
    return out;
  });
}

}  // namespace

void registerPoints(Napi::Env env, Napi::Object exports) {
  exports.Set("checkZkeyPoints", Napi::Function::New(env, CheckZkeyPoints, "checkZkeyPoints"));
}

}  // namespace node
}  // namespace mzk
