// The radix-2 number-theoretic transform over Fr, and the coset evaluation behind Groth16's H.
//
// snarkjs evaluates A, B and C at the odd powers of a 2n-th root of unity ω₂ₙ (the points where
// the vanishing polynomial xⁿ - 1 is -2): inverse NTT to coefficients, coefficient i times ω₂ₙⁱ,
// forward NTT. Here the inverse transform is decimation in frequency (natural order in,
// bit-reversed out) and the forward one decimation in time (bit-reversed in, natural out), so no
// permutation pass is needed: the coset factors (with 1/n folded in) are stored bit-reversed.
#pragma once

#include <stdexcept>
#include <vector>

#include "field.hpp"

namespace mzk {
namespace MZK_KERNEL {

/** Fr's two-adicity: r - 1 = 2^28 · t. */
constexpr int FR_TWO_ADICITY = 28;

/** A primitive 2^k-th root of unity as snarkjs/ffjavascript pick it: (5^t)^(2^(28-k)), 5 the smallest non-residue. */
inline Fr rootOfUnity(int k) {
  // t = (r - 1) >> 28
  u64 t[4];
  const u64* p = FrParams::P;
  u64 rm1[4] = {p[0] - 1, p[1], p[2], p[3]};
  for (int i = 0; i < 4; i++) t[i] = (rm1[i] >> 28) | (i < 3 ? rm1[i + 1] << 36 : 0);
  Fr w = Fr::fromU64(5).pow(t);
  for (int i = k; i < FR_TWO_ADICITY; i++) w = w.squared();
  return w;
}

inline size_t bitReverse(size_t x, int bits) {
  size_t r = 0;
  for (int i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

struct Domain {
  int log = 0;
  size_t n = 0;
  std::vector<Fr> roots;     // ω^i, i < n/2
  std::vector<Fr> rootsInv;  // ω^-i, i < n/2
  std::vector<Fr> cosetBR;   // at position p: shift^rev(p) / n

  void init(int logN) {
    if (logN < 0 || logN > FR_TWO_ADICITY) throw std::runtime_error("domain size out of range");
    log = logN;
    n = (size_t)1 << logN;
    const Fr w = rootOfUnity(logN);
    const Fr wi = w.inverse();
    const size_t half = n / 2;
    roots.resize(half);
    rootsInv.resize(half);
    Fr a = Fr::one(), b = Fr::one();
    for (size_t i = 0; i < half; i++) {
      roots[i] = a;
      rootsInv[i] = b;
      a *= w;
      b *= wi;
    }
    // The coset shift: ω₂ₙ, or for n = 2^28 (no 2n-th root) the square of the non-residue, as snarkjs.
    const Fr shift = logN < FR_TWO_ADICITY ? rootOfUnity(logN + 1) : Fr::fromU64(25);
    const Fr nInv = Fr::fromU64((u64)n).inverse();
    std::vector<Fr> pw(n);
    Fr s = nInv;
    for (size_t i = 0; i < n; i++) {
      pw[i] = s;
      s *= shift;
    }
    cosetBR.resize(n);
    for (size_t i = 0; i < n; i++) cosetBR[i] = pw[bitReverse(i, logN)];
  }

  /** Inverse transform without the 1/n: natural order in, bit-reversed order out. */
  void inverseDIF(Fr* a) const {
    for (size_t h = n / 2, step = 1; h >= 1; h >>= 1, step <<= 1) {
      for (size_t s = 0; s < n; s += 2 * h) {
        Fr* x = a + s;
        Fr* y = a + s + h;
        // j = 0: twiddle 1
        {
          const Fr u = x[0], v = y[0];
          x[0] = u + v;
          y[0] = u - v;
        }
        for (size_t j = 1; j < h; j++) {
          const Fr u = x[j], v = y[j];
          x[j] = u + v;
          y[j] = (u - v) * rootsInv[j * step];
        }
      }
      if (h == 1) break;
    }
  }

  /** Forward transform: bit-reversed order in, natural order out. */
  void forwardDIT(Fr* a) const {
    for (size_t h = 1, step = n / 2; h < n; h <<= 1, step >>= 1) {
      for (size_t s = 0; s < n; s += 2 * h) {
        Fr* x = a + s;
        Fr* y = a + s + h;
        {
          const Fr u = x[0], v = y[0];
          x[0] = u + v;
          y[0] = u - v;
        }
        for (size_t j = 1; j < h; j++) {
          const Fr u = x[j], v = y[j] * roots[j * step];
          x[j] = u + v;
          y[j] = u - v;
        }
      }
    }
  }

  /** Evaluations on the domain (natural order) → evaluations on the odd coset (natural order). */
  void toCoset(Fr* a) const {
    if (n == 1) {
      // A constant stays constant (1/n = 1, shift^0 = 1).
      return;
    }
    inverseDIF(a);
    for (size_t i = 0; i < n; i++) a[i] *= cosetBR[i];
    forwardDIT(a);
  }
};

}  // namespace MZK_KERNEL
}  // namespace mzk
