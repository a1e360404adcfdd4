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
#include "ntt32.hpp"

namespace mzk {
namespace {

using gpu::Fq2_32;
using gpu::Fq32;
using gpu::Fr32;
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

template <class C>
const char* curveName();
template <>
const char* curveName<gpu::G1Curve>() { return "G1"; }
template <>
const char* curveName<gpu::G2Curve>() { return "G2"; }

/** A coordinate: 32 bytes for Fq, 64 for Fq2 (c0 then c1). */
template <class F>
struct Coord;
template <>
struct Coord<Fq32> {
  static constexpr size_t SIZE = 32;
  static Fq32 at(const Bytes& b, size_t offset) { return plainAt<Fq32>(b, offset); }
  static void put(std::vector<uint8_t>& out, const Fq32& a) { putLimbs(out, a.toPlain()); }
};
template <>
struct Coord<Fq2_32> {
  static constexpr size_t SIZE = 64;
  static Fq2_32 at(const Bytes& b, size_t offset) { return Fq2_32{plainAt<Fq32>(b, offset), plainAt<Fq32>(b, offset + 32)}; }
  static void put(std::vector<uint8_t>& out, const Fq2_32& a) {
    putLimbs(out, a.c0.toPlain());
    putLimbs(out, a.c1.toPlain());
  }
};

template <class C>
gpu::Affine32<C> affineAt(const Bytes& b, size_t offset = 0) {
  using K = Coord<typename C::F>;
  const gpu::Affine32<C> p{K::at(b, offset), K::at(b, offset + K::SIZE)};
  if (!p.onCurve()) throw InputError(std::string("testGpu: ") + curveName<C>() + " point not on the curve");
  return p;
}

template <class C>
void putAffine(std::vector<uint8_t>& out, const gpu::Affine32<C>& p) {
  Coord<typename C::F>::put(out, p.x);
  Coord<typename C::F>::put(out, p.y);
}

/** An XYZZ point: ZZ = ZZZ = 0 (infinity), or ZZ³ = ZZZ² ≠ 0 and Y² = X³ + b·ZZ³ (on the curve). */
template <class C>
gpu::Xyzz<C> xyzzAt(const Bytes& b) {
  using F = typename C::F;
  using K = Coord<F>;
  const gpu::Xyzz<C> p{K::at(b, 0), K::at(b, K::SIZE), K::at(b, 2 * K::SIZE), K::at(b, 3 * K::SIZE)};
  if (p.ZZ.isZero() && p.ZZZ.isZero()) return p;
  const F zz3 = p.ZZ.squared() * p.ZZ;
  if (p.ZZ.isZero() || zz3 != p.ZZZ.squared()) throw InputError("testGpu: XYZZ point with ZZ^3 != ZZZ^2");
  if (p.Y.squared() != p.X.squared() * p.X + C::b() * zz3) throw InputError("testGpu: XYZZ point not on the curve");
  return p;
}

template <class C>
void putXyzz(std::vector<uint8_t>& out, const gpu::Xyzz<C>& p) {
  for (const typename C::F* c : {&p.X, &p.Y, &p.ZZ, &p.ZZZ}) Coord<typename C::F>::put(out, *c);
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

template <class C>
std::vector<uint8_t> curveOp(const std::string& name, const std::vector<Bytes>& args) {
  using K = Coord<typename C::F>;
  std::vector<uint8_t> out;
  const auto xyzz = [&](size_t i) {
    const Bytes& b = argAt(args, i);
    if (b.length != 4 * K::SIZE) throw InputError("testGpu: an XYZZ point is four coordinates");
    return xyzzAt<C>(b);
  };
  if (name == "madd") {
    const Bytes& q = argAt(args, 1);
    if (q.length != 2 * K::SIZE) throw InputError("testGpu: an affine point is two coordinates");
    putXyzz(out, xyzz(0).addAffine(affineAt<C>(q)));
  } else if (name == "add") {
    putXyzz(out, xyzz(0).add(xyzz(1)));
  } else if (name == "dbl") {
    putXyzz(out, xyzz(0).dbl());
  } else if (name == "neg") {
    putXyzz(out, xyzz(0).negated());
  } else if (name == "affine") {
    putAffine(out, xyzz(0).toAffine());
  } else if (name == "jacobian") {
    const gpu::Jacobian32<C> j = xyzz(0).toJacobian();
    for (const typename C::F* c : {&j.X, &j.Y, &j.Z}) K::put(out, *c);
  } else {
    throw InputError(std::string("testGpu: unknown op ") + curveName<C>() + "." + name);
  }
  return out;
}

/** Fq2's operations, on (c0, c1) pairs of 32-byte plain values. */
std::vector<uint8_t> fq2Op(const std::string& name, const std::vector<Bytes>& args) {
  using K = Coord<Fq2_32>;
  std::vector<uint8_t> out;
  const auto arg = [&](size_t i) {
    const Bytes& b = argAt(args, i);
    if (b.length != K::SIZE) throw InputError("testGpu: an Fq2 value is 64 bytes");
    return K::at(b, 0);
  };
  if (name == "add") K::put(out, arg(0) + arg(1));
  else if (name == "sub") K::put(out, arg(0) - arg(1));
  else if (name == "mul") K::put(out, arg(0) * arg(1));
  else if (name == "sqr") K::put(out, arg(0).squared());
  else if (name == "neg") K::put(out, -arg(0));
  else if (name == "inv") K::put(out, arg(0).inverse());
  else if (name == "eq") out.push_back(arg(0) == arg(1) ? 1 : 0);
  else if (name == "iszero") out.push_back(arg(0).isZero() ? 1 : 0);
  else throw InputError("testGpu: unknown op fq2." + name);
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

template <class C>
std::vector<gpu::Affine32<C>> basesAt(const Bytes& b, size_t n) {
  const size_t size = 2 * Coord<typename C::F>::SIZE;
  if (b.length != n * size) throw InputError("testGpu: msm needs one scalar per base");
  std::vector<gpu::Affine32<C>> bases(n);
  for (size_t i = 0; i < n; i++) bases[i] = affineAt<C>(b, i * size);
  return bases;
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
  const std::vector<u32> scalars = scalarsAt(argAt(args, name == "g1" || name == "g2" ? 1 : 0), n);
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
    putAffine(out, gpu::msmG1(basesAt<gpu::G1Curve>(argAt(args, 0), n).data(), scalars.data(), n, windowBitsArg(ints, true)).toAffine());
  } else if (name == "g2") {
    // bases n × 128 (affine, all zeros at infinity), scalars n × 32; ints: [c] (0 or none: chosen)
    putAffine(out, gpu::msmG2(basesAt<gpu::G2Curve>(argAt(args, 0), n).data(), scalars.data(), n, windowBitsArg(ints, true)).toAffine());
  } else {
    throw InputError("testGpu: unknown op msm." + name);
  }
  return out;
}

/**
 * "ntt.forward", "ntt.inverse", "ntt.coset" (coefficients → evaluations at shift·ω^j),
 * "ntt.tocoset" (evaluations at ω^j → at shift·ω^j, the CPU prover's toCoset): n × 32 bytes of
 * plain values, n a power of two up to 2^20; "ntt.root" with ints [k] → the 2^k-th root of unity,
 * "ntt.shift" with ints [k] → the coset shift of size 2^k.
 */
std::vector<uint8_t> nttOp(const std::string& name, const std::vector<Bytes>& args, const std::vector<int64_t>& ints) {
  std::vector<uint8_t> out;
  if (name == "root" || name == "shift") {
    if (ints.empty() || ints[0] < 0 || ints[0] > gpu::FR_TWO_ADICITY) throw InputError("testGpu: k must be 0..28");
    const int k = (int)ints[0];
    const Fr32 v = name == "root" ? gpu::rootOfUnity32(k) : k < gpu::FR_TWO_ADICITY ? gpu::rootOfUnity32(k + 1) : Fr32::fromU32(25);
    putLimbs(out, v.toPlain());
    return out;
  }
  const Bytes& b = argAt(args, 0);
  const size_t n = b.length / 32;
  int log = 0;
  while (((size_t)1 << log) < n) log++;
  if (b.length % 32 != 0 || n == 0 || ((size_t)1 << log) != n || log > 20) throw InputError("testGpu: ntt size must be a power of two up to 2^20");
  std::vector<Fr32> v(n);
  for (size_t i = 0; i < n; i++) v[i] = plainAt<Fr32>(b, i * 32);
  const gpu::NttDomain32 d(log);
  if (name == "forward") d.forward(v.data());
  else if (name == "inverse") d.inverse(v.data());
  else if (name == "coset") d.cosetForward(v.data());
  else if (name == "tocoset") d.toCoset(v.data());
  else throw InputError("testGpu: unknown op ntt." + name);
  for (const Fr32& x : v) putLimbs(out, x.toPlain());
  return out;
}

}  // namespace

std::vector<uint8_t> gpuTestOp(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints) {
  const size_t dot = op.find('.');
  const std::string group = op.substr(0, dot), name = dot == std::string::npos ? "" : op.substr(dot + 1);
  try {
    if (group == "fq") return fieldOp<Fq32>(name, args);
    if (group == "fr") return fieldOp<Fr32>(name, args);
    if (group == "fq2") return fq2Op(name, args);
    if (group == "g1") return curveOp<gpu::G1Curve>(name, args);
    if (group == "g2") return curveOp<gpu::G2Curve>(name, args);
    if (group == "ntt") return nttOp(name, args, ints);
    if (group == "msm") return msmOp(name, args, ints);
  } catch (const std::invalid_argument& e) {
    // The plan's own refusals (a scalar ≥ 2^254, a window width out of range) are bad arguments.
    throw InputError(std::string("testGpu: ") + e.what());
  }
  throw InputError("testGpu: unknown op " + op);
}

}  // namespace mzk
