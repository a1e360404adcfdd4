// What the GPU arithmetic (field32.hpp, g1xyzz.hpp) shares: one spelling for functions that are
// compiled for both the CPU and the GPU, and the 32-bit multiply-add-with-carry steps that the
// multiprecision arithmetic is built from.
//
// Why 32-bit limbs: a GPU's integer units are 32 bits wide. A 64×64-bit product is emulated from
// several 32-bit multiply instructions, while PTX has native 32-bit multiply-add with a carry flag
// (mad.lo.cc / madc.lo.cc / madc.hi.cc). Field elements here are therefore eight 32-bit limbs, and
// every product goes through mac() below, so a device build can replace its body with PTX without
// touching the field or curve code. The host build (and the tests, which run on the CPU) use the
// plain C++ bodies, which compute exactly the same values.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define MZK_HD __host__ __device__ __forceinline__
#define MZK_UNROLL _Pragma("unroll")
#else
#define MZK_HD inline
#define MZK_UNROLL
#endif

namespace mzk {
namespace gpu {

using u32 = uint32_t;
using u64 = uint64_t;

/** a + b + carry (carry 0 or 1); carry becomes the carry out. PTX: add.cc / addc.cc. */
MZK_HD constexpr u32 addc(u32 a, u32 b, u32& carry) {
  const u64 s = (u64)a + b + carry;
  carry = (u32)(s >> 32);
  return (u32)s;
}

/** a - b - borrow (borrow 0 or 1); borrow becomes the borrow out. PTX: sub.cc / subc.cc. */
MZK_HD constexpr u32 subb(u32 a, u32 b, u32& borrow) {
  const u64 d = (u64)a - b - borrow;
  borrow = (u32)(d >> 63);
  return (u32)d;
}

/**
 * The low word of a·b + c + carry; carry becomes its high word. The sum never exceeds 2^64 − 1
 * ((2^32 − 1)² + 2·(2^32 − 1)), so nothing is lost. PTX: mad.lo.cc + madc.hi, the pair a CIOS
 * row is made of.
 */
MZK_HD constexpr u32 mac(u32 a, u32 b, u32 c, u32& carry) {
  const u64 t = (u64)a * b + c + carry;
  carry = (u32)(t >> 32);
  return (u32)t;
}

}  // namespace gpu
}  // namespace mzk
