// Prime fields in Montgomery form on four 64-bit limbs (little-endian limb order).
//
// Everything here lives in the namespace MZK_KERNEL, which each kernel translation unit defines
// differently (kernel_generic.cpp, kernel_adx.cpp), so the same templates compile once per set of
// CPU features without clashing (see kernel.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#ifndef MZK_KERNEL
#error "MZK_KERNEL must name the kernel namespace"
#endif

#define MZK_INLINE inline __attribute__((always_inline))

namespace mzk {
namespace MZK_KERNEL {

using u64 = uint64_t;
using u128 = unsigned __int128;

// Add-with-carry and subtract-with-borrow on 64-bit words. GCC turns u128 carry arithmetic into
// long, spilling sequences; the x86-64 intrinsics (baseline adc/sbb, no ADX needed) give clean
// carry chains. Other 64-bit targets use the overflow builtins.
#if defined(__x86_64__)
MZK_INLINE u64 addc(u64 a, u64 b, unsigned char& carry) {
  unsigned long long r;
  carry = _addcarry_u64(carry, a, b, &r);
  return r;
}
MZK_INLINE u64 subb(u64 a, u64 b, unsigned char& borrow) {
  unsigned long long r;
  borrow = _subborrow_u64(borrow, a, b, &r);
  return r;
}
#else
MZK_INLINE u64 addc(u64 a, u64 b, unsigned char& carry) {
  u64 r;
  const bool c1 = __builtin_add_overflow(a, b, &r);
  const bool c2 = __builtin_add_overflow(r, (u64)carry, &r);
  carry = (unsigned char)(c1 | c2);
  return r;
}
MZK_INLINE u64 subb(u64 a, u64 b, unsigned char& borrow) {
  u64 r;
  const bool b1 = __builtin_sub_overflow(a, b, &r);
  const bool b2 = __builtin_sub_overflow(r, (u64)borrow, &r);
  borrow = (unsigned char)(b1 | b2);
  return r;
}
#endif

/** The 128-bit product of two words: returns the low word, hi gets the high word. */
MZK_INLINE u64 mulWide(u64 a, u64 b, u64& hi) {
  const u128 p = (u128)a * b;
  hi = (u64)(p >> 64);
  return (u64)p;
}

/** BN254 base field q. */
struct FqParams {
  static constexpr u64 P[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};
  /** -P^-1 mod 2^64 */
  static constexpr u64 INV = 0x87d20782e4866389ULL;
  /** 2^256 mod P: one in Montgomery form. */
  static constexpr u64 R1[4] = {0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL};
  /** 2^512 mod P: multiplying by it enters Montgomery form. */
  static constexpr u64 R2[4] = {0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL, 0x47ab1eff0a417ff6ULL, 0x06d89f71cab8351fULL};
};

/** BN254 scalar field r (the group order). */
struct FrParams {
  static constexpr u64 P[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};
  static constexpr u64 INV = 0xc2e1f593efffffffULL;
  static constexpr u64 R1[4] = {0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL, 0x666ea36f7879462eULL, 0x0e0a77c19a07df2fULL};
  static constexpr u64 R2[4] = {0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL, 0x8c49833d53bb8085ULL, 0x0216d0b17f4e44a5ULL};
};

/** a < P, as four limbs (plain or Montgomery: the comparison is the same). */
template <class P>
MZK_INLINE bool limbsBelowModulus(const u64* a) {
  for (int i = 3; i >= 0; i--) {
    if (a[i] < P::P[i]) return true;
    if (a[i] > P::P[i]) return false;
  }
  return false;
}

/**
 * An element of the prime field P in Montgomery form (a·2^256 mod P), always fully reduced.
 *
 * Multiplication is CIOS Montgomery multiplication with the "no final carry" shortcut that holds
 * when the modulus's top limb is below 2^63 - 1 (true for both BN254 fields): the running value
 * never needs a fifth limb. It is written on `unsigned __int128`, which GCC turns into mul/mulx
 * and add-with-carry chains; no assembly.
 */
template <class P>
struct Fp {
  u64 v[4];

  static MZK_INLINE Fp zero() { return Fp{{0, 0, 0, 0}}; }
  static MZK_INLINE Fp one() { return Fp{{P::R1[0], P::R1[1], P::R1[2], P::R1[3]}}; }
  /** The raw limbs, taken as already in Montgomery form. */
  static MZK_INLINE Fp raw(const u64* l) { return Fp{{l[0], l[1], l[2], l[3]}}; }

  MZK_INLINE bool isZero() const { return (v[0] | v[1] | v[2] | v[3]) == 0; }
  MZK_INLINE bool operator==(const Fp& o) const {
    return ((v[0] ^ o.v[0]) | (v[1] ^ o.v[1]) | (v[2] ^ o.v[2]) | (v[3] ^ o.v[3])) == 0;
  }
  MZK_INLINE bool operator!=(const Fp& o) const { return !(*this == o); }

  /** r = a - P if a >= P (a < 2P, held in four limbs). */
  static MZK_INLINE void reduceOnce(u64* r, const u64* a) {
    unsigned char borrow = 0;
    const u64 s0 = subb(a[0], P::P[0], borrow);
    const u64 s1 = subb(a[1], P::P[1], borrow);
    const u64 s2 = subb(a[2], P::P[2], borrow);
    const u64 s3 = subb(a[3], P::P[3], borrow);
    // borrow: a < P, keep a.
    const bool keep = borrow != 0;
    r[0] = keep ? a[0] : s0;
    r[1] = keep ? a[1] : s1;
    r[2] = keep ? a[2] : s2;
    r[3] = keep ? a[3] : s3;
  }

  static MZK_INLINE void add(Fp& r, const Fp& a, const Fp& b) {
    unsigned char carry = 0;
    u64 t[4];
    t[0] = addc(a.v[0], b.v[0], carry);
    t[1] = addc(a.v[1], b.v[1], carry);
    t[2] = addc(a.v[2], b.v[2], carry);
    t[3] = addc(a.v[3], b.v[3], carry);
    // a + b < 2P < 2^255: no carry out of the top limb.
    reduceOnce(r.v, t);
  }

  static MZK_INLINE void sub(Fp& r, const Fp& a, const Fp& b) {
    unsigned char borrow = 0;
    const u64 t0 = subb(a.v[0], b.v[0], borrow);
    const u64 t1 = subb(a.v[1], b.v[1], borrow);
    const u64 t2 = subb(a.v[2], b.v[2], borrow);
    const u64 t3 = subb(a.v[3], b.v[3], borrow);
    const u64 mask = 0 - (u64)borrow;
    unsigned char carry = 0;
    r.v[0] = addc(t0, P::P[0] & mask, carry);
    r.v[1] = addc(t1, P::P[1] & mask, carry);
    r.v[2] = addc(t2, P::P[2] & mask, carry);
    r.v[3] = addc(t3, P::P[3] & mask, carry);
  }

  static MZK_INLINE void neg(Fp& r, const Fp& a) {
    const u64 mask = a.isZero() ? 0 : ~(u64)0;
    unsigned char borrow = 0;
    r.v[0] = subb(P::P[0], a.v[0], borrow) & mask;
    r.v[1] = subb(P::P[1], a.v[1], borrow) & mask;
    r.v[2] = subb(P::P[2], a.v[2], borrow) & mask;
    r.v[3] = subb(P::P[3], a.v[3], borrow) & mask;
  }

  /**
   * Montgomery multiplication, CIOS: per word of b, add a·b[i], then m·P with m = t0·(-P^-1), and
   * shift one word down. The running value stays below 2P (the modulus's top word is below
   * 2^62), so no fifth word is kept and one conditional subtraction finishes.
   */
  static MZK_INLINE void mul(Fp& r, const Fp& a, const Fp& b) {
#if defined(MZK_ADX_ASM)
    mulAdx(r, a, b);
#else
    mulPortable(r, a, b);
#endif
  }

#if defined(MZK_ADX_ASM)
  /**
   * The same CIOS with BMI2/ADX: mulx leaves the flags alone, and adcx/adox keep two independent
   * carry chains (the low and high halves of each row of products), which a compiler does not
   * schedule on its own. Measured: see the package README.
   */
  static MZK_INLINE void mulAdx(Fp& r, const Fp& a, const Fp& b) {
    u64 t0, t1, t2, t3, A, lo, hi, zero = 0;
#define MZK_ROW_FIRST                       \
  "movq 0(%[b]), %%rdx\n\t"                \
  "xorl %k[zero], %k[zero]\n\t"            \
  "mulxq 0(%[a]), %[t0], %[t1]\n\t"        \
  "mulxq 8(%[a]), %[lo], %[t2]\n\t"        \
  "adcxq %[lo], %[t1]\n\t"                 \
  "mulxq 16(%[a]), %[lo], %[t3]\n\t"       \
  "adcxq %[lo], %[t2]\n\t"                 \
  "mulxq 24(%[a]), %[lo], %[A]\n\t"        \
  "adcxq %[lo], %[t3]\n\t"                 \
  "adcxq %[zero], %[A]\n\t"
#define MZK_ROW(off)                        \
  "movq " #off "(%[b]), %%rdx\n\t"         \
  "xorl %k[A], %k[A]\n\t"                  \
  "mulxq 0(%[a]), %[lo], %[hi]\n\t"        \
  "adoxq %[lo], %[t0]\n\t"                 \
  "adcxq %[hi], %[t1]\n\t"                 \
  "mulxq 8(%[a]), %[lo], %[hi]\n\t"        \
  "adoxq %[lo], %[t1]\n\t"                 \
  "adcxq %[hi], %[t2]\n\t"                 \
  "mulxq 16(%[a]), %[lo], %[hi]\n\t"       \
  "adoxq %[lo], %[t2]\n\t"                 \
  "adcxq %[hi], %[t3]\n\t"                 \
  "mulxq 24(%[a]), %[lo], %[hi]\n\t"       \
  "adoxq %[lo], %[t3]\n\t"                 \
  "adcxq %[zero], %[hi]\n\t"               \
  "adoxq %[hi], %[A]\n\t"
#define MZK_REDUCE                          \
  "movq %[t0], %%rdx\n\t"                  \
  "imulq %[inv], %%rdx\n\t"                \
  "xorl %k[lo], %k[lo]\n\t"                \
  "mulxq 0(%[p]), %[lo], %[hi]\n\t"        \
  "adcxq %[lo], %[t0]\n\t"                 \
  "adoxq %[hi], %[t1]\n\t"                 \
  "mulxq 8(%[p]), %[lo], %[hi]\n\t"        \
  "adcxq %[lo], %[t1]\n\t"                 \
  "adoxq %[hi], %[t2]\n\t"                 \
  "mulxq 16(%[p]), %[lo], %[hi]\n\t"       \
  "adcxq %[lo], %[t2]\n\t"                 \
  "adoxq %[hi], %[t3]\n\t"                 \
  "mulxq 24(%[p]), %[lo], %[hi]\n\t"       \
  "adcxq %[lo], %[t3]\n\t"                 \
  "adoxq %[hi], %[A]\n\t"                  \
  "adcxq %[zero], %[A]\n\t"                \
  "movq %[t1], %[t0]\n\t"                  \
  "movq %[t2], %[t1]\n\t"                  \
  "movq %[t3], %[t2]\n\t"                  \
  "movq %[A], %[t3]\n\t"
    __asm__(MZK_ROW_FIRST MZK_REDUCE MZK_ROW(8) MZK_REDUCE MZK_ROW(16) MZK_REDUCE MZK_ROW(24) MZK_REDUCE
            : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [A] "=&r"(A), [lo] "=&r"(lo), [hi] "=&r"(hi),
              [zero] "+&r"(zero)
            : [a] "r"(a.v), [b] "r"(b.v), [p] "r"(P::P), [inv] "r"(P::INV), "m"(*(const u64(*)[4])a.v), "m"(*(const u64(*)[4])b.v)
            : "rdx", "cc");
#undef MZK_ROW_FIRST
#undef MZK_ROW
#undef MZK_REDUCE
    const u64 t[4] = {t0, t1, t2, t3};
    reduceOnce(r.v, t);
  }
#endif

  /** Portable CIOS: u128 products, carry chains with addc (low halves, then high halves). */
  static MZK_INLINE void mulPortable(Fp& r, const Fp& a, const Fp& b) {
    u64 t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
    for (int i = 0; i < 4; i++) {
      const u64 bi = b.v[i];
      u64 h0, h1, h2, h3;
      const u64 l0 = mulWide(a.v[0], bi, h0);
      const u64 l1 = mulWide(a.v[1], bi, h1);
      const u64 l2 = mulWide(a.v[2], bi, h2);
      const u64 l3 = mulWide(a.v[3], bi, h3);
      unsigned char c = 0;
      t0 = addc(t0, l0, c);
      t1 = addc(t1, l1, c);
      t2 = addc(t2, l2, c);
      t3 = addc(t3, l3, c);
      t4 = addc(t4, 0, c);
      c = 0;
      t1 = addc(t1, h0, c);
      t2 = addc(t2, h1, c);
      t3 = addc(t3, h2, c);
      t4 = addc(t4, h3, c);

      const u64 m = t0 * P::INV;
      u64 g0, g1, g2, g3;
      const u64 k0 = mulWide(m, P::P[0], g0);
      const u64 k1 = mulWide(m, P::P[1], g1);
      const u64 k2 = mulWide(m, P::P[2], g2);
      const u64 k3 = mulWide(m, P::P[3], g3);
      c = 0;
      (void)addc(t0, k0, c);  // zero by the choice of m; only its carry matters
      t1 = addc(t1, k1, c);
      t2 = addc(t2, k2, c);
      t3 = addc(t3, k3, c);
      t4 = addc(t4, 0, c);
      c = 0;
      t0 = addc(t1, g0, c);
      t1 = addc(t2, g1, c);
      t2 = addc(t3, g2, c);
      t3 = addc(t4, g3, c);
      t4 = 0;
    }
    const u64 t[4] = {t0, t1, t2, t3};
    reduceOnce(r.v, t);
  }

  static MZK_INLINE void sqr(Fp& r, const Fp& a) { mul(r, a, a); }

  MZK_INLINE Fp operator+(const Fp& o) const { Fp r; add(r, *this, o); return r; }
  MZK_INLINE Fp operator-(const Fp& o) const { Fp r; sub(r, *this, o); return r; }
  MZK_INLINE Fp operator*(const Fp& o) const { Fp r; mul(r, *this, o); return r; }
  MZK_INLINE Fp operator-() const { Fp r; neg(r, *this); return r; }
  MZK_INLINE Fp& operator+=(const Fp& o) { add(*this, *this, o); return *this; }
  MZK_INLINE Fp& operator-=(const Fp& o) { sub(*this, *this, o); return *this; }
  MZK_INLINE Fp& operator*=(const Fp& o) { mul(*this, *this, o); return *this; }
  MZK_INLINE Fp squared() const { Fp r; sqr(r, *this); return r; }
  MZK_INLINE Fp doubled() const { Fp r; add(r, *this, *this); return r; }

  /** From a canonical plain integer (four limbs, < P) into Montgomery form. */
  static MZK_INLINE Fp fromPlain(const u64* l) {
    Fp r;
    mul(r, raw(l), raw(P::R2));
    return r;
  }
  static Fp fromU64(u64 x) {
    const u64 l[4] = {x, 0, 0, 0};
    return fromPlain(l);
  }
  /** Out of Montgomery form: the canonical plain integer. */
  MZK_INLINE void toPlain(u64* out) const {
    static const u64 ONE[4] = {1, 0, 0, 0};
    Fp r;
    mul(r, *this, raw(ONE));
    std::memcpy(out, r.v, 32);
  }

  /** this^e for an exponent given as four limbs (plain). Square and multiply, 4-bit windows. */
  Fp pow(const u64* e) const {
    Fp table[16];
    table[0] = one();
    for (int i = 1; i < 16; i++) table[i] = table[i - 1] * *this;
    Fp r = one();
    bool started = false;
    for (int i = 63; i >= 0; i--) {
      if (started)
        for (int k = 0; k < 4; k++) r = r.squared();
      const unsigned nib = (unsigned)((e[i / 16] >> ((i % 16) * 4)) & 15);
      if (nib != 0) {
        r = r * table[nib];
        started = true;
      }
    }
    return r;
  }

  /** The inverse by Fermat (this^(P-2)); zero maps to zero. */
  Fp inverse() const {
    u64 e[4] = {P::P[0] - 2, P::P[1], P::P[2], P::P[3]};
    return pow(e);
  }
};

using Fq = Fp<FqParams>;
using Fr = Fp<FrParams>;

/**
 * Inverts every nonzero element of `a` in place with one field inversion (Montgomery's trick);
 * zeros stay zero. `scratch` holds n elements.
 */
template <class F>
void batchInverse(F* a, size_t n, F* scratch) {
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!a[i].isZero()) acc *= a[i];
  }
  F inv = acc.inverse();
  for (size_t i = n; i-- > 0;) {
    if (a[i].isZero()) continue;
    F t = inv * scratch[i];
    inv *= a[i];
    a[i] = t;
  }
}

}  // namespace MZK_KERNEL
}  // namespace mzk
