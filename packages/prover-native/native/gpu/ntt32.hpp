// The radix-2 NTT over Fr for the GPU (Groth16's H polynomial), on field32.hpp's 32-bit-limb Fr,
// in the shape its kernels will take: each pass is a function of one thread's index, written once
// for the CPU and the GPU (MZK_HD), and NttDomain32 runs the passes in order on the CPU, one loop
// over the thread indices per kernel launch:
//   1. bitReverseStep: the bit-reversal permutation, in place (index i swaps with rev(i) when
//      i < rev(i), so no two threads touch one element);
//   2. butterflyStep: one stage of decimation-in-time butterflies, n/2 threads a stage, log n
//      stages; the twiddles ω^j (j < n/2) are one table computed once, each stage reading every
//      2^(log n − 1 − stage)-th entry;
//   3. scaleStep: an element-wise product with a table (1/n for the inverse, powers of the coset
//      shift before a coset transform).
// The CPU prover (../ntt.hpp) avoids the permutation by pairing a DIF inverse with a DIT forward;
// here both directions are the same DIT passes over different twiddle tables, which is the simpler
// kernel set. The coset is the CPU prover's: the shift is ω₂ₙ (a primitive 2n-th root of unity, so
// the coset is where xⁿ − 1 = −2), or 25 for n = 2^28 where Fr has no 2n-th root.
#pragma once

#include <stdexcept>
#include <vector>

#include "field32.hpp"

namespace mzk {
namespace gpu {

/** Fr's two-adicity: r − 1 = 2^28 · t. */
constexpr int FR_TWO_ADICITY = 28;

/**
 * A primitive 2^k-th root of unity as snarkjs (and the CPU prover) pick it: (5^t)^(2^(28−k)), with
 * t = (r − 1)/2^28 and 5 the smallest quadratic non-residue. A Fermat-sized power: host use.
 */
MZK_HD Fr32 rootOfUnity32(int k) {
  constexpr Limbs P = Fr32::modulus();
  Limbs t{};
  // (r − 1) >> 28; r's low limb is odd, so r − 1 borrows nothing.
  for (int i = 0; i < LIMBS; i++) {
    const u32 lo = i == 0 ? P.v[0] - 1 : P.v[i];
    t.v[i] = (lo >> FR_TWO_ADICITY) | (i + 1 < LIMBS ? P.v[i + 1] << (32 - FR_TWO_ADICITY) : 0u);
  }
  Fr32 w = Fr32::fromU32(5).pow(t);
  for (int i = k; i < FR_TWO_ADICITY; i++) w = w.squared();
  return w;
}

/** The low `bits` bits of x in reverse order. */
MZK_HD u32 bitReverse32(u32 x, int bits) {
  u32 r = 0;
  for (int i = 0; i < bits; i++) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
}

/** Thread i of the permutation pass over 2^logN elements. */
MZK_HD void bitReverseStep(Fr32* a, int logN, u32 i) {
  const u32 j = bitReverse32(i, logN);
  if (i < j) {
    const Fr32 t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/**
 * Thread k (< n/2) of DIT stage `stage` (0 ≤ stage < logN): half-blocks of h = 2^stage, butterfly
 * j = k mod h of block k/h pairs i0 = 2h·(k/h) + j with i0 + h, twiddle ω_{2h}^j = ω^(j·n/2h).
 */
MZK_HD void butterflyStep(Fr32* a, const Fr32* twiddles, int logN, int stage, u32 k) {
  const u32 h = 1u << stage;
  const u32 j = k & (h - 1);
  const u32 i0 = ((k >> stage) << (stage + 1)) | j;
  const u32 i1 = i0 + h;
  const Fr32 u = a[i0];
  const Fr32 v = a[i1] * twiddles[j << (logN - 1 - stage)];
  a[i0] = u + v;
  a[i1] = u - v;
}

/** Thread i of an element-wise product with a table. */
MZK_HD void scaleStep(Fr32* a, const Fr32* factors, u32 i) { a[i] = a[i] * factors[i]; }

/** The tables of one size 2^logN, computed once, and the passes run in kernel order on the CPU. */
struct NttDomain32 {
  int log = 0;
  u32 n = 1;
  std::vector<Fr32> twiddles;     // ω^j, j < n/2
  std::vector<Fr32> twiddlesInv;  // ω^−j, j < n/2
  std::vector<Fr32> nInv;         // 1/n, n times: the inverse's scale as a table for scaleStep
  std::vector<Fr32> cosetPowers;  // shift^i, i < n

  explicit NttDomain32(int logN) {
    if (logN < 0 || logN > FR_TWO_ADICITY || logN > 31) throw std::invalid_argument("NTT size must be 2^0..2^28");
    log = logN;
    n = 1u << logN;
    const Fr32 w = rootOfUnity32(logN);
    const Fr32 wInv = w.inverse();
    twiddles.resize(n / 2);
    twiddlesInv.resize(n / 2);
    Fr32 a = Fr32::one(), b = Fr32::one();
    for (u32 j = 0; j < n / 2; j++) {
      twiddles[j] = a;
      twiddlesInv[j] = b;
      a = a * w;
      b = b * wInv;
    }
    nInv.assign(n, Fr32::fromU32(n).inverse());
    const Fr32 shift = logN < FR_TWO_ADICITY ? rootOfUnity32(logN + 1) : Fr32::fromU32(25);
    cosetPowers.resize(n);
    Fr32 s = Fr32::one();
    for (u32 i = 0; i < n; i++) {
      cosetPowers[i] = s;
      s = s * shift;
    }
  }

  /** Permutation, then the log n stages: Σ a[i]·tw^(ij) for the table's root. */
  void transform(Fr32* a, const Fr32* table) const {
    for (u32 i = 0; i < n; i++) bitReverseStep(a, log, i);
    for (int stage = 0; stage < log; stage++)
      for (u32 k = 0; k < n / 2; k++) butterflyStep(a, table, log, stage, k);
  }

  /** Coefficients → evaluations at ω^j (natural order in and out). */
  void forward(Fr32* a) const { transform(a, twiddles.data()); }

  /** Evaluations at ω^j → coefficients: the transform at ω^−1, then 1/n. */
  void inverse(Fr32* a) const {
    transform(a, twiddlesInv.data());
    for (u32 i = 0; i < n; i++) scaleStep(a, nInv.data(), i);
  }

  /** Coefficients → evaluations at shift·ω^j: coefficient i times shift^i, then forward. */
  void cosetForward(Fr32* a) const {
    for (u32 i = 0; i < n; i++) scaleStep(a, cosetPowers.data(), i);
    forward(a);
  }

  /** Evaluations at ω^j → evaluations at shift·ω^j, what the CPU prover's Domain::toCoset computes. */
  void toCoset(Fr32* a) const {
    inverse(a);
    cosetForward(a);
  }
};

}  // namespace gpu
}  // namespace mzk
