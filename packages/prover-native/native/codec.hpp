// The forms numbers and points take outside one kernel: as a snarkjs key or witness stores them
// (Montgomery little-endian, checked canonical and on the curve on the way in) and as a proof's
// JSON gives them (plain decimal strings).
#pragma once

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "curve.hpp"

namespace mzk {
namespace MZK_KERNEL {

/** Whether 32 little-endian bytes are P's modulus (a file's header naming its field). */
template <class P>
bool sameModulus(const uint8_t* p) {
  u64 l[4];
  std::memcpy(l, p, 32);
  return l[0] == P::P[0] && l[1] == P::P[1] && l[2] == P::P[2] && l[3] == P::P[3];
}

/** A field element stored as Montgomery limbs in the file: checked canonical. */
template <class P>
bool readMont(const uint8_t* p, Fp<P>& out) {
  std::memcpy(out.v, p, 32);
  return limbsBelowModulus<P>(out.v);
}

inline bool readG1(const uint8_t* p, G1Affine& out) {
  return readMont<FqParams>(p, out.x) && readMont<FqParams>(p + 32, out.y) && out.onCurve();
}
inline bool readG2(const uint8_t* p, G2Affine& out) {
  return readMont<FqParams>(p, out.x.c0) && readMont<FqParams>(p + 32, out.x.c1) && readMont<FqParams>(p + 64, out.y.c0) &&
         readMont<FqParams>(p + 96, out.y.c1) && out.onCurve();
}

/** A plain 256-bit integer as a decimal string. */
inline std::string toDecimal(const u64* limbs) {
  u64 x[4] = {limbs[0], limbs[1], limbs[2], limbs[3]};
  const u64 BASE = 10000000000000000000ULL;  // 10^19
  std::vector<u64> parts;
  while (x[0] | x[1] | x[2] | x[3]) {
    u128 rem = 0;
    for (int i = 3; i >= 0; i--) {
      const u128 cur = (rem << 64) | x[i];
      x[i] = (u64)(cur / BASE);
      rem = cur % BASE;
    }
    parts.push_back((u64)rem);
  }
  if (parts.empty()) return "0";
  std::string out = std::to_string(parts.back());
  char buf[24];
  for (size_t i = parts.size() - 1; i-- > 0;) {
    std::snprintf(buf, sizeof buf, "%019llu", (unsigned long long)parts[i]);
    out += buf;
  }
  return out;
}

template <class P>
std::string decimalOf(const Fp<P>& a) {
  u64 l[4];
  a.toPlain(l);
  return toDecimal(l);
}

}  // namespace MZK_KERNEL
}  // namespace mzk
