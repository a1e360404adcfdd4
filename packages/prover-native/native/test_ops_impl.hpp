// The test entry points of one kernel (test_ops.hpp): plain (non-Montgomery) little-endian
// integers in and out, so a BigInt reference (test/reference.ts) can check every operation of the
// field, curve, MSM, NTT and pairing arithmetic. Test-only: linked into the test addon alone.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "curve.hpp"
#include "kernel.hpp"
#include "msm.hpp"
#include "ntt.hpp"
#include "pairing.hpp"
#include "random.hpp"
#include "test_ops.hpp"

namespace mzk {
namespace MZK_KERNEL {

template <class P>
Fp<P> plainArg(const Bytes& b, size_t offset = 0) {
  if (b.length < offset + 32) throw InputError("test: argument too short");
  u64 l[4];
  std::memcpy(l, b.data + offset, 32);
  if (!limbsBelowModulus<P>(l)) throw InputError("test: value not below the modulus");
  return Fp<P>::fromPlain(l);
}

template <class P>
void putPlain(std::vector<uint8_t>& out, const Fp<P>& a) {
  u64 l[4];
  a.toPlain(l);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(l);
  out.insert(out.end(), p, p + 32);
}

inline Fq2 fq2Arg(const Bytes& b, size_t offset = 0) { return Fq2{plainArg<FqParams>(b, offset), plainArg<FqParams>(b, offset + 32)}; }
inline void putFq2(std::vector<uint8_t>& out, const Fq2& a) {
  putPlain(out, a.c0);
  putPlain(out, a.c1);
}

template <class C>
struct Codec;
template <>
struct Codec<G1> {
  static constexpr size_t SIZE = 64;
  static G1Affine get(const Bytes& b, size_t off) {
    G1Affine p{plainArg<FqParams>(b, off), plainArg<FqParams>(b, off + 32)};
    if (!p.onCurve()) throw InputError("test: G1 point not on the curve");
    return p;
  }
  static void put(std::vector<uint8_t>& out, const G1Affine& p) {
    putPlain(out, p.x);
    putPlain(out, p.y);
  }
};
template <>
struct Codec<G2> {
  static constexpr size_t SIZE = 128;
  static G2Affine get(const Bytes& b, size_t off) {
    G2Affine p{fq2Arg(b, off), fq2Arg(b, off + 64)};
    if (!p.onCurve()) throw InputError("test: G2 point not on the curve");
    return p;
  }
  static void put(std::vector<uint8_t>& out, const G2Affine& p) {
    putFq2(out, p.x);
    putFq2(out, p.y);
  }
};

template <class C>
std::vector<uint8_t> curveOp(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints) {
  using Aff = Affine<C>;
  using Jac = Jacobian<C>;
  using K = Codec<C>;
  std::vector<uint8_t> out;
  const auto arg = [&](size_t i) -> const Bytes& {
    if (i >= args.size()) throw InputError("test: missing argument");
    return args[i];
  };
  if (op == "add") {  // Jacobian + Jacobian (both from affine, the second scaled to a non-trivial Z)
    const Jac p = Jac::from(K::get(arg(0), 0)).dbl().add(Jac::from(K::get(arg(0), 0)).negated());  // p, with Z != 1
    K::put(out, p.add(Jac::from(K::get(arg(1), 0)).dbl().add(Jac::from(K::get(arg(1), 0)).negated())).toAffine());
  } else if (op == "madd") {
    const Jac p = Jac::from(K::get(arg(0), 0)).dbl().add(Jac::from(K::get(arg(0), 0)).negated());
    K::put(out, p.addAffine(K::get(arg(1), 0)).toAffine());
  } else if (op == "dbl") {
    K::put(out, Jac::from(K::get(arg(0), 0)).dbl().toAffine());
  } else if (op == "mul") {
    u64 k[4];
    if (arg(1).length < 32) throw InputError("test: scalar too short");
    std::memcpy(k, arg(1).data, 32);
    K::put(out, Jac::from(K::get(arg(0), 0)).mul(k).toAffine());
  } else if (op == "msm") {
    // ints: [c, copies, threads]; bases n × SIZE, scalars n × 32 (plain, < r)
    const size_t n = arg(0).length / K::SIZE;
    if (arg(1).length != n * 32) throw InputError("test: msm needs one scalar per base");
    std::vector<Aff> bases(n);
    for (size_t i = 0; i < n; i++) bases[i] = K::get(arg(0), i * K::SIZE);
    std::vector<u64> scalars(n * 4);
    std::memcpy(scalars.data(), arg(1).data, n * 32);
    for (size_t i = 0; i < n; i++)
      if (!limbsBelowModulus<FrParams>(&scalars[4 * i])) throw InputError("test: scalar not below r");
    const int c = ints.size() > 0 ? (int)ints[0] : 0;
    const int copies = ints.size() > 1 ? (int)ints[1] : 0;
    const int threads = ints.size() > 2 ? (int)ints[2] : 1;
    if (c < 0 || c > 15 || copies < 0 || threads < 1 || threads > 64) throw InputError("test: bad msm parameters");
    MsmBases<C> table;
    table.build(bases.data(), n, choosePlan(n, sizeof(Aff), (size_t)1 << 30, c, copies), threads);
    MsmWorkspace ws;
    K::put(out, msm<C>(table, scalars.data(), n, threads, ws, Cancel{}).toAffine());
  } else {
    throw InputError("test: unknown op " + op);
  }
  return out;
}

template <class P>
std::vector<uint8_t> fieldOp(const std::string& op, const std::vector<Bytes>& args) {
  std::vector<uint8_t> out;
  const auto arg = [&](size_t i) {
    if (i >= args.size()) throw InputError("test: missing argument");
    return plainArg<P>(args[i]);
  };
  if (op == "add") putPlain(out, arg(0) + arg(1));
  else if (op == "sub") putPlain(out, arg(0) - arg(1));
  else if (op == "mul") putPlain(out, arg(0) * arg(1));
  else if (op == "sqr") putPlain(out, arg(0).squared());
  else if (op == "neg") putPlain(out, -arg(0));
  else if (op == "inv") putPlain(out, arg(0).inverse());
  else throw InputError("test: unknown op " + op);
  return out;
}

/** Fq12 as its twelve Fq coefficients, plain: c0 then c1 (Fq6), each c0 c1 c2 (Fq2), each c0 c1. */
inline Fq12 fq12Arg(const Bytes& b) {
  if (b.length < 384) throw InputError("test: an Fq12 value is 384 bytes");
  Fq2 c[6];
  for (int i = 0; i < 6; i++) c[i] = fq2Arg(b, (size_t)i * 64);
  return Fq12{Fq6{c[0], c[1], c[2]}, Fq6{c[3], c[4], c[5]}};
}
inline void putFq12(std::vector<uint8_t>& out, const Fq12& f) {
  for (const Fq6* h : {&f.c0, &f.c1})
    for (const Fq2* c : {&h->c0, &h->c1, &h->c2}) putFq2(out, *c);
}

/**
 * "pairing.e" (G1, G2) → the reduced pairing; "pairing.check" (n G1s, n G2s) → [1] when their
 * product of pairings is 1, else [0]; "fq12.pow" (Fq12, 32-byte exponent); "fq12.mul".
 */
inline std::vector<uint8_t> pairingOp(const std::string& group, const std::string& name, const std::vector<Bytes>& args) {
  if (args.size() < 2) throw InputError("test: missing argument");
  std::vector<uint8_t> out;
  if (group == "fq12") {
    const Fq12 a = fq12Arg(args[0]);
    if (name == "mul") {
      putFq12(out, a * fq12Arg(args[1]));
    } else if (name == "pow") {
      if (args[1].length != 32) throw InputError("test: the exponent is 32 bytes");
      u64 e[4];
      std::memcpy(e, args[1].data, 32);
      putFq12(out, a.pow(e, 4));
    } else {
      throw InputError("test: unknown op fq12." + name);
    }
    return out;
  }
  const size_t n = args[0].length / 64;
  if (args[0].length != n * 64 || args[1].length != n * 128 || n == 0) throw InputError("test: pairing needs n G1 and n G2 points");
  std::vector<G2Prepared> qs;
  std::vector<PairingTerm> terms;
  qs.reserve(n);
  for (size_t i = 0; i < n; i++) qs.emplace_back(Codec<G2>::get(args[1], i * 128));
  for (size_t i = 0; i < n; i++) terms.push_back(PairingTerm{Codec<G1>::get(args[0], i * 64), &qs[i]});
  if (name == "e") putFq12(out, finalExponentiation(millerLoop(terms.data(), n)));
  else if (name == "check") out.push_back(pairingProductIsOne(terms.data(), n) ? 1 : 0);
  else throw InputError("test: unknown op pairing." + name);
  return out;
}

inline std::vector<uint8_t> testOp(const std::string& op, const std::vector<Bytes>& args, const std::vector<int64_t>& ints) {
  const size_t dot = op.find('.');
  const std::string group = op.substr(0, dot), name = dot == std::string::npos ? "" : op.substr(dot + 1);
  if (group == "fq") return fieldOp<FqParams>(name, args);
  if (group == "fr") return fieldOp<FrParams>(name, args);
  if (group == "fq2") {
    if (args.empty()) throw InputError("test: missing argument");
    std::vector<uint8_t> out;
    const Fq2 a = fq2Arg(args[0]);
    if (name == "mul" && args.size() > 1) putFq2(out, a * fq2Arg(args[1]));
    else if (name == "sqr") putFq2(out, a.squared());
    else if (name == "inv") putFq2(out, a.inverse());
    else throw InputError("test: unknown op " + op);
    return out;
  }
  if (group == "pairing" || group == "fq12") return pairingOp(group, name, args);
  if (group == "g1") return curveOp<G1>(name, args, ints);
  if (group == "g2") return curveOp<G2>(name, args, ints);
  if (group == "ntt") {
    // ints: [mode] 0 forward, 1 inverse (with 1/n), 2 odd-coset evaluation; values n × 32 plain
    if (args.empty() || ints.empty()) throw InputError("test: ntt needs values and a mode");
    const size_t n = args[0].length / 32;
    int log = 0;
    while (((size_t)1 << log) < n) log++;
    if (n == 0 || ((size_t)1 << log) != n || log > 20) throw InputError("test: ntt size must be a power of two up to 2^20");
    std::vector<Fr> v(n);
    for (size_t i = 0; i < n; i++) v[i] = plainArg<FrParams>(args[0], i * 32);
    Domain d;
    d.init(log);
    if (ints[0] == 0) {
      // natural → bit-reversed, then the DIT
      std::vector<Fr> br(n);
      for (size_t i = 0; i < n; i++) br[bitReverse(i, log)] = v[i];
      d.forwardDIT(br.data());
      v = br;
    } else if (ints[0] == 1) {
      d.inverseDIF(v.data());
      std::vector<Fr> nat(n);
      const Fr nInv = Fr::fromU64(n).inverse();
      for (size_t i = 0; i < n; i++) nat[bitReverse(i, log)] = v[i] * nInv;
      v = nat;
    } else {
      d.toCoset(v.data());
    }
    std::vector<uint8_t> out;
    for (auto& x : v) putPlain(out, x);
    return out;
  }
  if (group == "root") {
    if (ints.empty() || ints[0] < 0 || ints[0] > 28) throw InputError("test: root needs 0..28");
    std::vector<uint8_t> out;
    putPlain(out, rootOfUnity((int)ints[0]));
    return out;
  }
  if (group == "random") {
    std::vector<uint8_t> out;
    u64 r[4];
    randomScalar(r);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(r);
    out.insert(out.end(), p, p + 32);
    return out;
  }
  throw InputError("test: unknown op " + op);
}
}  // namespace MZK_KERNEL
}  // namespace mzk
