// The MSM's schedule for the GPU (Pippenger's bucket method), as host code: the digit width for
// n points, signed c-bit digits of the scalars, the (point, digit) pairs grouped by (window,
// bucket), and the order of the reduction. msm (msmG1, msmG2) runs that schedule on the CPU with
// the GPU's own arithmetic (field32.hpp, fq2.hpp, g1xyzz.hpp, g2xyzz.hpp), so it is exactly the
// computation the kernels will do, one step per kernel launch, in G1 or G2 alike:
//   1. digits: each scalar's signed digits, window-major (all scalars' digit of window 0, then 1…);
//   2. grouping: a counting sort of the nonzero digits by key window·2^(c−1) + |digit| − 1, giving
//      every (window, bucket) its run of point indices (the sign in bit 31) and the runs' offsets;
//   3. accumulation: each bucket is the sum of its run's points (negated where the sign is set),
//      added one affine point at a time into an XYZZ bucket;
//   4. window sums: Σ_b b·bucket_b by a running sum from the top bucket down (2 additions a bucket);
//   5. the windows combined from the top, c doublings between one window and the next.
// Unlike the CPU prover's MSM (../msm.hpp), there are no precomputed shifted copies of the bases:
// every window has its own set of buckets, which is the parallelism the GPU wants.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "g1xyzz.hpp"
#include "g2xyzz.hpp"

namespace mzk {
namespace gpu {

/** Scalars are plain integers below 2^254 (every element of Fr is, r < 2^254). */
constexpr int SCALAR_BITS = 254;
/** The widest digit the plan takes: 2^15 buckets a window. */
constexpr int MAX_WINDOW_BITS = 16;
/** A digit's sign, in the top bit of its encoding and of a grouped entry. */
constexpr u32 SIGN_BIT = 0x80000000u;

/**
 * Windows for c-bit signed digits: a signed digit may carry one into the next window, so the
 * windows must hold one bit more than the scalar, ⌈255/c⌉ (one more than ⌈254/c⌉ exactly when c
 * divides 254). The top window then never carries: its bits are below 2^(c−1), plus a carry of 1.
 */
inline int windowsFor(int c) { return (SCALAR_BITS + 1 + c - 1) / c; }

inline void checkWindowBits(int c) {
  if (c < 1 || c > MAX_WINDOW_BITS) throw std::invalid_argument("window bits must be 1..16");
}

/**
 * The digit width for n points, by counting group operations: n·W mixed additions into buckets,
 * 2·2^(c−1) additions a window for its running sums, c doublings between windows. This ignores
 * what a device adds to it (the sort, occupancy, memory traffic): a starting point to be tuned on
 * the device, not a measured choice. Ties go to the narrower digit (fewer buckets to hold).
 */
inline int chooseWindowBits(size_t n) {
  int best = 2;
  double bestCost = 1e300;
  for (int c = 2; c <= MAX_WINDOW_BITS; c++) {
    const double W = windowsFor(c);
    const double cost = (double)n * W + W * 2.0 * (double)(1u << (c - 1)) + (W - 1) * c;
    if (cost < bestCost) {
      bestCost = cost;
      best = c;
    }
  }
  return best;
}

/** Bits [bit, bit + c) of a 256-bit little-endian scalar (c ≤ 31); zero past the top. */
inline u32 scalarBits(const u32* s, int bit, int c) {
  if (bit >= LIMBS * 32) return 0;
  const int limb = bit >> 5, off = bit & 31;
  u64 w = s[limb];
  if (limb + 1 < LIMBS) w |= (u64)s[limb + 1] << 32;
  return (u32)(w >> off) & ((1u << c) - 1u);
}

/** A scalar below 2^254 (the plan's windows hold 255 bits; see windowsFor). */
inline bool scalarInRange(const u32* s) { return s[LIMBS - 1] < (1u << (SCALAR_BITS - 32 * (LIMBS - 1))); }

/**
 * Signed digits of n scalars (8 limbs each, plain, < 2^254): digit w of scalar i at out[w·n + i],
 * encoded as its magnitude with the sign in bit 31 (zero is 0, never a negative zero). Each digit
 * is the window's c bits plus the carry from below, moved into −2^(c−1) < d ≤ 2^(c−1) by
 * subtracting 2^c and carrying 1 into the next window, so Σ d_w·2^(c·w) = s and buckets are needed
 * for magnitudes 1..2^(c−1) only: half of an unsigned digit's.
 */
inline void signedDigits(const u32* scalars, size_t n, int c, u32* out) {
  checkWindowBits(c);
  const int W = windowsFor(c);
  const int64_t half = (int64_t)1 << (c - 1);
  for (size_t i = 0; i < n; i++) {
    const u32* s = scalars + (size_t)LIMBS * i;
    if (!scalarInRange(s)) throw std::invalid_argument("scalar not below 2^254");
    int64_t carry = 0;
    for (int w = 0; w < W; w++) {
      int64_t d = (int64_t)scalarBits(s, w * c, c) + carry;
      carry = d > half ? 1 : 0;
      d -= carry << c;
      out[(size_t)w * n + i] = d < 0 ? ((u32)(-d) | SIGN_BIT) : (u32)d;
    }
  }
}

/** The (point, digit) pairs grouped by (window, bucket): what the accumulation kernel reads. */
struct BucketGroups {
  int c = 0;
  int windows = 0;
  /** Buckets a window: digit magnitudes 1..2^(c−1), bucket |d| − 1. */
  u32 buckets = 0;
  /** Key k = window·buckets + bucket holds entries[offsets[k] .. offsets[k + 1]); windows·buckets + 1 of them. */
  std::vector<u32> offsets;
  /** Point index, with SIGN_BIT where the point is to be negated; by index within a bucket. */
  std::vector<u32> entries;
};

/**
 * Groups the digits (signedDigits' layout) by a counting sort over the keys: a histogram, its
 * exclusive prefix sum (the offsets), then a scatter in point order. On the device the same is a
 * histogram, a scan and a scatter (or a radix sort of key·2^32 + entry); zero digits make no entry.
 */
inline BucketGroups groupByBucket(const u32* digits, size_t n, int c) {
  checkWindowBits(c);
  if (n >= (size_t)SIGN_BIT) throw std::invalid_argument("too many points for 31-bit indices");
  BucketGroups g;
  g.c = c;
  g.windows = windowsFor(c);
  g.buckets = 1u << (c - 1);
  const size_t keys = (size_t)g.windows * g.buckets;
  g.offsets.assign(keys + 1, 0);
  for (int w = 0; w < g.windows; w++) {
    const u32* d = digits + (size_t)w * n;
    for (size_t i = 0; i < n; i++) {
      if (d[i] != 0) g.offsets[(size_t)w * g.buckets + (d[i] & ~SIGN_BIT)]++;  // counted at key + 1
    }
  }
  for (size_t k = 0; k < keys; k++) g.offsets[k + 1] += g.offsets[k];
  g.entries.resize(g.offsets[keys]);
  std::vector<u32> cursor(g.offsets.begin(), g.offsets.end() - 1);
  for (int w = 0; w < g.windows; w++) {
    const u32* d = digits + (size_t)w * n;
    for (size_t i = 0; i < n; i++) {
      if (d[i] == 0) continue;
      const size_t key = (size_t)w * g.buckets + (d[i] & ~SIGN_BIT) - 1;
      g.entries[cursor[key]++] = (u32)i | (d[i] & SIGN_BIT);
    }
  }
  return g;
}

/** Σ_b (b + 1)·buckets[b], by a running sum from the top bucket down: 2 additions a bucket. */
template <class Point>
inline Point weightedBucketSum(const Point* buckets, u32 count) {
  Point running = Point::infinity(), sum = Point::infinity();
  for (u32 b = count; b-- > 0;) {
    running = running.add(buckets[b]);
    sum = sum.add(running);
  }
  return sum;
}

/**
 * Σ scalars[i]·bases[i] by the plan above, on the CPU with the GPU's arithmetic, in G1 or G2
 * (Point is G1Xyzz or G2Xyzz: the schedule does not depend on the group): scalars 8 limbs each,
 * plain, below 2^254; bases affine (infinity as all zeros) in Montgomery form; c = 0 picks the
 * digit width by chooseWindowBits.
 */
template <class Point>
inline Point msm(const typename Point::Affine* bases, const u32* scalars, size_t n, int c = 0) {
  if (c == 0) c = chooseWindowBits(n);
  checkWindowBits(c);
  const int W = windowsFor(c);
  std::vector<u32> digits((size_t)W * n);
  signedDigits(scalars, n, c, digits.data());
  const BucketGroups g = groupByBucket(digits.data(), n, c);

  std::vector<Point> buckets(g.buckets);
  std::vector<Point> windowSums(W);
  for (int w = 0; w < W; w++) {
    for (u32 b = 0; b < g.buckets; b++) {
      const size_t key = (size_t)w * g.buckets + b;
      Point acc = Point::infinity();
      for (u32 e = g.offsets[key]; e < g.offsets[key + 1]; e++) {
        const u32 entry = g.entries[e];
        const typename Point::Affine& p = bases[entry & ~SIGN_BIT];
        acc = acc.addAffine((entry & SIGN_BIT) != 0 ? p.negated() : p);
      }
      buckets[b] = acc;
    }
    windowSums[w] = weightedBucketSum(buckets.data(), g.buckets);
  }

  Point total = Point::infinity();
  for (int w = W - 1; w >= 0; w--) {
    if (w != W - 1)
      for (int k = 0; k < c; k++) total = total.dbl();
    total = total.add(windowSums[w]);
  }
  return total;
}

inline G1Xyzz msmG1(const G1Affine32* bases, const u32* scalars, size_t n, int c = 0) { return msm<G1Xyzz>(bases, scalars, n, c); }
inline G2Xyzz msmG2(const G2Affine32* bases, const u32* scalars, size_t n, int c = 0) { return msm<G2Xyzz>(bases, scalars, n, c); }

}  // namespace gpu
}  // namespace mzk
