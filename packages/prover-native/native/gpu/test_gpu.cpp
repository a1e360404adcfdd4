// The GPU arithmetic's test entry points (test_gpu.hpp), on the CPU: values in and out as plain
// little-endian integers (32 bytes each, points as their coordinates), so that the BigInt
// reference (test/reference.ts) checks every operation. XYZZ points go in and out as their four
// coordinates (X, Y, ZZ, ZZZ), so a test can hand in any representative of a point and check the
// representation that comes back, not only the point.
#include "test_gpu.hpp"

#include <cstring>
#include <stdexcept>

#include "../kernel.hpp"
#include "msmplan.hpp"

namespace mzk {
namespace {

using gpu::Fq32;
using gpu::Fr32;
using gpu::G1Affine32;
using gpu::G1Xyzz;
using gpu::Limbs;
using gpu::u32;

const Bytes& argAt(const std::vector<Bytes>& args, size_t i) {
  if (i >= args.size()) throw InputError("testGpu: missing argument");
  return args[i];
}

Limbs limbsAt(const Bytes& b, size_t offset) {
  if (b.length < offset + 32) throw InputError("testGpu: argument too short");
  Limbs l;
  std::memcpy(l.v, b.data + offset, 32);  // little-endian limbs on a little-endian host
  return l;
}

void putLimbs(std::vector<uint8_t>& out, const Limbs& l) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(l.v);
  out.insert(out.end(), p, p + 32);
}

void putU32(std::vector<uint8_t>& out, u32 v) {
  for (int i = 0; i < 4; i++) out.push_back((uint8_t)(v >> (8 * i)));
}

template <class F>
bool belowModulus(const Limbs& l) {
  constexpr Limbs P = F::modulus();
  for (int i = gpu::LIMBS - 1; i >= 0; i--) {
    if (l.v[i] != P.v[i]) return l.v[i] < P.v[i];
  }
  return false;
}

template <class F>
F plainAt(const Bytes& b, size_t offset = 0) {
  const Limbs l = limbsAt(b, offset);
  if (!belowModulus<F>(l)) throw InputError("testGpu: value not below the modulus");
  return F::fromPlain(l);
}

G1Affine32 affineAt(const Bytes& b, size_t offset = 0) {
  const G1Affine32 p{plainAt<Fq32>(b, offset), plainAt<Fq32>(b, offset + 32)};
  if (!p.onCurve()) throw InputError("testGpu: G1 point not on the curve");
  return p;
}

void putAffine(std::vector<uint8_t>& out, const G1Affine32& p) {
  putLimbs(out, p.x.toPlain());
  putLimbs(out, p.y.toPlain());
}

/** An XYZZ point: ZZ = ZZZ = 0 (infinity), or ZZ³ = ZZZ² ≠ 0 and Y² = X³ + 3·ZZ³ (on the curve). */
G1Xyzz xyzzAt(const Bytes& b) {
  const G1Xyzz p{plainAt<Fq32>(b, 0), plainAt<Fq32>(b, 32), plainAt<Fq32>(b, 64), plainAt<Fq32>(b, 96)};
  if (p.ZZ.isZero() && p.ZZZ.isZero()) return p;
  const Fq32 zz3 = p.ZZ.squared() * p.ZZ;
  if (p.ZZ.isZero() || zz3 != p.ZZZ.squared()) throw InputError("testGpu: XYZZ point with ZZ^3 != ZZZ^2");
  if (p.Y.squared() != p.X.squared() * p.X + Fq32::fromU32(3) * zz3) throw InputError("testGpu: XYZZ point not on the curve");
  return p;
}

void putXyzz(std::vector<uint8_t>& out, const G1Xyzz& p) {
  for (const Fq32* c : {&p.X, &p.Y, &p.ZZ, &p.ZZZ}) putLimbs(out, c->toPlain());
}

template <class F>
std::vector<uint8_t> fieldOp(const std::string& name, const std::vector<Bytes>& args) {
  std::vector<uint8_t> out;
  const auto arg = [&](size_t i) { return plainAt<F>(argAt(args, i)); };
  if (name == "add") putLimbs(out, (arg(0) + arg(1)).toPlain());
  else if (name == "sub") putLimbs(out, (arg(0) - arg(1)).toPlain());
  else if (name == "mul") putLimbs(out, (arg(0) * arg(1)).toPlain());
  else if (name == "sqr") putLimbs(out, arg(0).squared().toPlain());
  else if (name == "neg") putLimbs(out, (-arg(0)).toPlain());
  else if (name == "inv") putLimbs(out, arg(0).inverse().toPlain());
  else if (name == "eq") out.push_back(arg(0) == arg(1) ? 1 : 0);
  else if (name == "iszero") out.push_back(arg(0).isZero() ? 1 : 0);
  // The Montgomery form itself: a·2^256 mod p, and back from a raw (Montgomery) value.
  else if (name == "tomont") {
    const F a = arg(0);
    Limbs raw;
    std::memcpy(raw.v, a.v, sizeof raw.v);
    putLimbs(out, raw);
  } else if (name == "frommont") {
    const Limbs raw = limbsAt(argAt(args, 0), 0);
    if (!belowModulus<F>(raw)) throw InputError("testGpu: value not below the modulus");
    putLimbs(out, F::fromLimbs(raw).toPlain());
  } else if (name == "constants") {
    // p, 2^256 mod p, 2^512 mod p, −p⁻¹ mod 2^32: as computed at compile time.
    putLimbs(out, F::modulus());
    putLimbs(out, F::montOne());
    putLimbs(out, F::montR2());
    Limbs inv{};
    inv.v[0] = F::INV;
    putLimbs(out, inv);
  } else {
    throw InputError("testGpu: unknown op " + name);
  }
  return out;
}

std::vector<uint8_t> curveOp(const std::string& name, const std::vector<Bytes>& args) {
  std::vector<uint8_t> out;
  const auto xyzz = [&](size_t i) {
    const Bytes& b = argAt(args, i);
    if (b.length != 128) throw InputError("testGpu: an XYZZ point is 128 bytes");
    return xyzzAt(b);
  };
  if (name == "madd") {
    const Bytes& q = argAt(args, 1);
    if (q.length != 64) throw InputError("testGpu: an affine point is 64 bytes");
    putXyzz(out, xyzz(0).addAffine(affineAt(q)));
  } else if (name == "add") {
    putXyzz(out, xyzz(0).add(xyzz(1)));
  } else if (name == "dbl") {
    putXyzz(out, xyzz(0).dbl());
  } else if (name == "neg") {
    putXyzz(out, xyzz(0).negated());
  } else if (name == "affine") {
    putAffine(out, xyzz(0).toAffine());
  } else if (name == "jacobian") {
    const gpu::G1Jacobian32 j = xyzz(0).toJacobian();
    for (const Fq32* c : {&j.X, &j.Y, &j.Z}) putLimbs(out, c->toPlain());
  } else {
    throw InputError("testGpu: unknown op g1." + name);
  }
  return out;
}

/** n scalars of 32 bytes each, as limbs; their range is checked by the plan (below 2^254). */
std::vector<u32> scalarsAt(const Bytes& b, size_t& n) {
  if (b.length % 32 != 0) throw InputError("testGpu: scalars are 32 bytes each");
  n = b.length / 32;
  std::vector<u32> s(n * gpu::LIMBS);
  if (n != 0) std::memcpy(s.data(), b.data, b.length);
  return s;
}

int windowBitsArg(const std::vector<int64_t>& ints, bool zeroChooses) {
  const int64_t c = ints.empty() ? 0 : ints[0];
  if (c == 0 && zeroChooses) return 0;
  if (c < 1 || c > gpu::MAX_WINDOW_BITS) throw InputError("testGpu: window bits must be 1..16");
  return (int)c;
}

std::vector<uint8_t> msmOp(const std::string& name, const std::vector<Bytes>& args, const std::vector<int64_t>& ints) {
  std::vector<uint8_t> out;
  if (name == "window") {
    // ints: point counts → one byte each, the digit width chosen for that many points
    for (const int64_t n : ints) {
      if (n < 0) throw InputError("testGpu: a point count is not negative");
      out.push_back((uint8_t)gpu::chooseWindowBits((size_t)n));
    }
    return out;
  }
  size_t n = 0;
  const std::vector<u32> scalars = scalarsAt(argAt(args, name == "g1" ? 1 : 0), n);
  if (name == "digits") {
    // → windows·n u32: window-major, magnitude with the sign in bit 31
    const int c = windowBitsArg(ints, false);
    std::vector<u32> digits((size_t)gpu::windowsFor(c) * n);
    gpu::signedDigits(scalars.data(), n, c, digits.data());
    for (const u32 d : digits) putU32(out, d);
  } else if (name == "buckets") {
    // → the offsets (windows·2^(c−1) + 1 u32), then the entries (u32)
    const int c = windowBitsArg(ints, false);
    std::vector<u32> digits((size_t)gpu::windowsFor(c) * n);
    gpu::signedDigits(scalars.data(), n, c, digits.data());
    const gpu::BucketGroups g = gpu::groupByBucket(digits.data(), n, c);
    for (const u32 o : g.offsets) putU32(out, o);
    for (const u32 e : g.entries) putU32(out, e);
  } else if (name == "g1") {
    // bases n × 64 (affine, (0, 0) at infinity), scalars n × 32; ints: [c] (0 or none: chosen)
    const Bytes& b = argAt(args, 0);
    if (b.length != n * 64) throw InputError("testGpu: msm needs one scalar per base");
    std::vector<G1Affine32> bases(n);
    for (size_t i = 0; i < n; i++) bases[i] = affineAt(b, i * 64);
    putAffine(out, gpu::msmG1(bases.data(), scalars.data(), n, windowBitsArg(ints, true)).toAffine());
  } else {
    throw InputError("testGpu: unknown op msm." + name);
  }
  return out;
}

}  // namespace

std::vector<uint8_t> gpuTestOp(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints) {
  const size_t dot = op.find('.');
  const std::string group = op.substr(0, dot), name = dot == std::string::npos ? "" : op.substr(dot + 1);
  try {
    if (group == "fq") return fieldOp<Fq32>(name, args);
    if (group == "fr") return fieldOp<Fr32>(name, args);
    if (group == "g1") return curveOp(name, args);
    if (group == "msm") return msmOp(name, args, ints);
  } catch (const std::invalid_argument& e) {
    // The plan's own refusals (a scalar ≥ 2^254, a window width out of range) are bad arguments.
    throw InputError(std::string("testGpu: ") + e.what());
  }
  throw InputError("testGpu: unknown op " + op);
}

}  // namespace mzk
