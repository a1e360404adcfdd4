// Multi-scalar multiplication over fixed bases (the zkey's points): Pippenger's bucket method with
//  - signed c-bit digits (buckets for 1..2^(c-1); a negative digit adds the negated point),
//  - precomputed shifted copies of every base, 2^(c·rounds·k)·P for k < copies, made once when the
//    zkey loads: with copies = windows (the default when it fits the memory budget) all windows
//    share ONE set of buckets and one bucket reduction, and no doublings are left at prove time,
//  - bucket accumulation in affine coordinates: the (point, bucket) pairs are counting-sorted by
//    bucket, then each bucket's list is summed pairwise in rounds, every round's additions sharing a
//    single field inversion (Montgomery's batch trick): about 5M + 1S per addition instead of the
//    7M + 4S of a mixed Jacobian addition; buckets go a run at a time, so a run's points stay in L2
//    through its rounds,
//  - zero digits cost nothing, so zero scalars, ones and small witness values (bits, counters) skip
//    every window but the lowest; bases at infinity are skipped altogether,
//  - threads split the bases (digits, sort) and then the bucket range (accumulation, reduction).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "curve.hpp"
#include "parallel.hpp"

namespace mzk {
namespace MZK_KERNEL {

struct MsmPlan {
  int c = 0;        // digit width in bits
  int windows = 0;  // ceil(255 / c): signed digits of a scalar below 2^254
  int copies = 0;   // shifted copies of each base held in the table
  int rounds = 0;   // ceil(windows / copies): bucket sets reduced per MSM (1 = fully precomputed)
};

inline int windowsFor(int c) { return (255 + c - 1) / c; }

/**
 * Picks the digit width and the number of precomputed copies for n bases of pointBytes each, by a
 * cost model in units of one affine bucket addition: n·windows additions, plus for every round a
 * bucket reduction of 2^(c-1) (mixed + full Jacobian additions, ~4.5 affine additions each) and c
 * doublings. The table may hold at most budgetBytes.
 */
inline MsmPlan choosePlan(size_t n, size_t pointBytes, size_t budgetBytes, int forceC = 0, int forceCopies = 0) {
  MsmPlan best;
  double bestCost = 1e300;
  for (int c = 2; c <= 15; c++) {
    if (forceC != 0 && c != forceC) continue;
    const int W = windowsFor(c);
    int copies;
    if (forceCopies != 0) {
      copies = std::min(forceCopies, W);
    } else {
      const size_t perCopy = std::max<size_t>(1, n) * pointBytes;
      copies = (int)std::min<size_t>((size_t)W, std::max<size_t>(1, budgetBytes / perCopy));
    }
    const int rounds = (W + copies - 1) / copies;
    const double cost = (double)n * W + rounds * (4.5 * (double)(1u << (c - 1)) + 1.5 * c);
    if (cost < bestCost) {
      bestCost = cost;
      best = MsmPlan{c, W, copies, rounds};
    }
  }
  return best;
}

/** Reusable scratch memory for MSMs, kept by the proving thread between proofs. */
struct MsmWorkspace {
  std::vector<int32_t> digits;
  std::vector<uint32_t> entries;
  std::vector<uint32_t> counts;     // per thread × bucket
  std::vector<uint32_t> bucketStart;
  std::vector<uint32_t> bucketLen;
  struct PerThread {
    std::vector<u64> den, prod;
    std::vector<uint8_t> kind;
    std::vector<u64> chunk;  // the points of a run of buckets, summed while they sit in L2
    std::vector<uint32_t> chunkStart, chunkLen;
  };
  std::vector<u64> sums;            // one affine point per bucket
  std::vector<PerThread> perThread;

  template <class T>
  static T* sized(std::vector<u64>& v, size_t n) {
    const size_t words = (n * sizeof(T) + 7) / 8;
    grow(v, words);
    return reinterpret_cast<T*>(v.data());
  }

  /**
   * At least n elements, contents not kept: the old buffer is freed before the new one is taken, so
   * growing from one MSM's digits to the next one's never holds both (the memory formula counts
   * the largest once).
   */
  template <class V>
  static void grow(V& v, size_t n) {
    if (v.size() >= n) return;
    V().swap(v);
    v.resize(n);
  }
};

template <class C>
struct MsmBases {
  using Aff = Affine<C>;
  using Jac = Jacobian<C>;
  using F = typename C::F;

  MsmPlan plan;
  size_t n = 0;
  /** [i * copies + k] = 2^(c · rounds · k) · P_i, affine: `own`, or a mapping of the table cache. */
  const Aff* table = nullptr;
  std::vector<Aff> own;
  /** Base i is not the point at infinity. */
  std::vector<uint8_t> present;
  size_t presentCount = 0;

  size_t tableBytes() const { return n * (size_t)plan.copies * sizeof(Aff); }
  size_t bytes() const { return tableBytes() + present.size(); }
  bool mapped() const { return table != nullptr && own.empty() && n != 0; }

  /** Room for the table; the caller writes base i at own[i * copies], then calls finish. */
  void layout(size_t count, const MsmPlan& p) {
    plan = p;
    n = count;
    if ((uint64_t)count * (uint64_t)p.copies >= 0x80000000ULL) throw std::length_error("MSM table too large");
    own.assign(n * (size_t)p.copies, Aff::infinity());
    table = own.data();
  }

  /** Uses a table made earlier with the same bases and plan (the table cache's mapping). */
  void mapTo(const Aff* mapped, size_t count, const MsmPlan& p) {
    plan = p;
    n = count;
    own.clear();
    own.shrink_to_fit();
    table = mapped;
    markPresent();
  }

  /** Builds the shifted copies from the bases at own[i * copies]; `threads` share the doublings. */
  void finish(int threads) {
    markPresent();
    const int K = plan.copies;
    if (K == 1 || n == 0) return;
    Aff* t = own.data();
    const int shift = plan.c * plan.rounds;
    const int T = std::max(1, std::min<int>(threads, (int)((n + 255) / 256)));
    // Blocks of bases, so the Jacobian scratch stays small (a few hundred KB per thread) whatever n.
    constexpr size_t BLOCK = 2048;
    forkJoin(T, [&](int th) {
      size_t begin, end;
      splitRange(n, T, th, begin, end);
      std::vector<Jac> jac(BLOCK);
      std::vector<F> s1(BLOCK), s2(BLOCK);
      std::vector<Aff> out(BLOCK);
      for (size_t b0 = begin; b0 < end; b0 += BLOCK) {
        const size_t m = std::min(BLOCK, end - b0);
        for (int k = 1; k < K; k++) {
          for (size_t i = 0; i < m; i++) {
            Jac J = Jac::from(t[(b0 + i) * K + (k - 1)]);
            for (int d = 0; d < shift; d++) J = J.dbl();
            jac[i] = J;
          }
          batchToAffine<C>(jac.data(), out.data(), m, s1.data(), s2.data());
          for (size_t i = 0; i < m; i++) t[(b0 + i) * K + k] = out[i];
        }
      }
    });
  }

  /** Builds the table from `count` bases. */
  void build(const Aff* bases, size_t count, const MsmPlan& p, int threads) {
    layout(count, p);
    for (size_t i = 0; i < n; i++) own[i * (size_t)p.copies] = bases[i];
    finish(threads);
  }

 private:
  void markPresent() {
    const size_t K = (size_t)plan.copies;
    present.assign(n, 0);
    presentCount = 0;
    for (size_t i = 0; i < n; i++) {
      present[i] = table[i * K].isInfinity() ? 0 : 1;
      presentCount += present[i];
    }
  }
};

/** Signed c-bit digits of each scalar (plain, < 2^254), windows per scalar. */
inline void signedDigits(const u64* scalars, int c, int W, int32_t* out, size_t begin, size_t end) {
  const u64 mask = (1ULL << c) - 1;
  const int64_t half = 1LL << (c - 1);
  for (size_t i = begin; i < end; i++) {
    const u64* s = scalars + 4 * i;
    int64_t carry = 0;
    for (int w = 0; w < W; w++) {
      const int bit = w * c;
      u64 bits = 0;
      if (bit < 256) {
        const int limb = bit >> 6, off = bit & 63;
        bits = s[limb] >> off;
        if (off + c > 64 && limb < 3) bits |= s[limb + 1] << (64 - off);
        bits &= mask;
      }
      int64_t d = (int64_t)bits + carry;
      if (d > half) {
        d -= (int64_t)1 << c;
        carry = 1;
      } else {
        carry = 0;
      }
      out[i * W + w] = (int32_t)d;
    }
  }
}

namespace detail {

/** Pair kinds in an affine accumulation round. */
enum : uint8_t { ADD = 0, DOUBLE = 1, TAKE_SECOND = 2, TAKE_FIRST = 3, INFINITY_ = 4 };

/**
 * Sums each bucket's points (bucket b holds S[start[b] .. start[b] + len[b])) pairwise, in place,
 * until one point per bucket is left at S[start[b]]; every round shares one inversion.
 */
template <class C>
void accumulateBuckets(Affine<C>* S, const uint32_t* start, uint32_t* len, size_t lo, size_t hi,
                       MsmWorkspace::PerThread& ws, const Cancel& cancel) {
  using F = typename C::F;
  using Aff = Affine<C>;
  for (;;) {
    size_t pairs = 0;
    for (size_t b = lo; b < hi; b++) pairs += len[b] / 2;
    if (pairs == 0) return;
    checkCancel(cancel);
    F* den = MsmWorkspace::sized<F>(ws.den, pairs);
    F* prod = MsmWorkspace::sized<F>(ws.prod, pairs);
    MsmWorkspace::grow(ws.kind, pairs);
    uint8_t* kind = ws.kind.data();

    // Denominators, and running products for the batch inversion: four interleaved chains, so
    // the multiplications of neighbouring pairs overlap instead of waiting on one another.
    constexpr size_t LANES = 4;
    F acc[LANES] = {F::one(), F::one(), F::one(), F::one()};
    size_t p = 0;
    for (size_t b = lo; b < hi; b++) {
      const uint32_t half = len[b] / 2;
      const Aff* s = S + start[b];
      for (uint32_t i = 0; i < half; i++, p++) {
        const Aff& P1 = s[2 * i];
        const Aff& P2 = s[2 * i + 1];
        uint8_t k;
        F d;
        // Infinity (from an earlier P + (-P)) is (0, 0): checked before comparing x.
        if (P1.isInfinity()) {
          k = TAKE_SECOND;
          d = F::one();
        } else if (P2.isInfinity()) {
          k = TAKE_FIRST;
          d = F::one();
        } else if (P1.x != P2.x) {
          k = ADD;
          d = P2.x - P1.x;
        } else if (P1.y == P2.y && !P1.y.isZero()) {
          k = DOUBLE;
          d = P1.y.doubled();
        } else {
          k = INFINITY_;
          d = F::one();
        }
        kind[p] = k;
        den[p] = d;
        prod[p] = acc[p % LANES];
        acc[p % LANES] *= d;
      }
    }
    // One inversion for the four chains, then back substitution: den[p] becomes 1 / den[p].
    F inv[LANES];
    {
      const F a01 = acc[0] * acc[1], a23 = acc[2] * acc[3];
      const F all = (a01 * a23).inverse();
      const F i01 = all * a23, i23 = all * a01;
      inv[0] = i01 * acc[1];
      inv[1] = i01 * acc[0];
      inv[2] = i23 * acc[3];
      inv[3] = i23 * acc[2];
    }
    for (size_t q = pairs; q-- > 0;) {
      F& chain = inv[q % LANES];
      const F t = chain * prod[q];
      chain *= den[q];
      den[q] = t;
    }
    // Sums, written to start + i in increasing i: never over a point a later pair still reads.
    p = 0;
    for (size_t b = lo; b < hi; b++) {
      const uint32_t half = len[b] / 2;
      Aff* s = S + start[b];
      for (uint32_t i = 0; i < half; i++, p++) {
        const Aff P1 = s[2 * i];
        const Aff& P2 = s[2 * i + 1];
        switch (kind[p]) {
          case ADD: {
            const F lambda = (P2.y - P1.y) * den[p];
            const F x3 = lambda.squared() - P1.x - P2.x;
            s[i] = Aff{x3, lambda * (P1.x - x3) - P1.y};
            break;
          }
          case DOUBLE: {
            const F xx = P1.x.squared();
            const F lambda = (xx.doubled() + xx) * den[p];
            const F x3 = lambda.squared() - P1.x.doubled();
            s[i] = Aff{x3, lambda * (P1.x - x3) - P1.y};
            break;
          }
          case TAKE_SECOND: s[i] = P2; break;
          case TAKE_FIRST: s[i] = P1; break;
          default: s[i] = Aff::infinity(); break;
        }
      }
      // An odd point out moves down behind the sums.
      if ((len[b] & 1) && len[b] > 1) s[half] = s[len[b] - 1];
      len[b] = (len[b] + 1) / 2;
    }
  }
}

/** Small non-negative multiple by double-and-add. */
template <class C>
Jacobian<C> timesSmall(const Jacobian<C>& p, uint64_t k) {
  Jacobian<C> r = Jacobian<C>::infinity();
  for (int i = 63; i >= 0; i--) {
    r = r.dbl();
    if ((k >> i) & 1) r = r.add(p);
  }
  return r;
}

}  // namespace detail

/**
 * Σ scalars[i] · P_i over the first n bases (n may be below bases.n). Scalars are plain canonical
 * integers (< r), four limbs each.
 */
template <class C>
Jacobian<C> msm(const MsmBases<C>& bases, const u64* scalars, size_t n, int threads, MsmWorkspace& ws, const Cancel& cancel) {
  using Aff = Affine<C>;
  using Jac = Jacobian<C>;
  const MsmPlan& plan = bases.plan;
  const int c = plan.c, W = plan.windows, K = plan.copies, G = plan.rounds;
  const size_t B = (size_t)1 << (c - 1);
  if (n == 0 || bases.presentCount == 0) return Jac::infinity();
  const int T = std::max(1, std::min<int>(threads, (int)((n + 63) / 64)));

  int32_t* digits;
  {
    MsmWorkspace::grow(ws.digits, n * (size_t)W);
    digits = ws.digits.data();
  }
  MsmWorkspace::grow(ws.counts, (size_t)T * B);
  if (ws.bucketStart.size() < B + 1) ws.bucketStart.resize(B + 1);
  if (ws.bucketLen.size() < B) ws.bucketLen.resize(B);
  if (ws.perThread.size() < (size_t)T) ws.perThread.resize(T);
  uint32_t* counts = ws.counts.data();
  uint32_t* start = ws.bucketStart.data();
  uint32_t* len = ws.bucketLen.data();
  const uint8_t* present = bases.present.data();
  const Aff* table = bases.table;

  // Digits and per-thread bucket histograms for every round at once would need G histograms;
  // rounds are few (1 when fully precomputed), so each round sorts on its own.
  forkJoin(T, [&](int t) {
    size_t b0, b1;
    splitRange(n, T, t, b0, b1);
    signedDigits(scalars, c, W, digits, b0, b1);
  });

  Jac acc = Jac::infinity();
  for (int j = G - 1; j >= 0; j--) {
    checkCancel(cancel);
    // 1. Histogram per thread over its bases.
    forkJoin(T, [&](int t) {
      size_t b0, b1;
      splitRange(n, T, t, b0, b1);
      uint32_t* h = counts + (size_t)t * B;
      std::memset(h, 0, B * sizeof(uint32_t));
      for (size_t i = b0; i < b1; i++) {
        if (!present[i]) continue;
        const int32_t* d = digits + i * W;
        for (int k = 0, w = j; k < K && w < W; k++, w += G) {
          const int32_t v = d[w];
          if (v != 0) h[(v < 0 ? -v : v) - 1]++;
        }
      }
    });
    // 2. Bucket starts; each thread's own write position per bucket (counts reused as cursors).
    uint32_t total = 0;
    for (size_t b = 0; b < B; b++) {
      start[b] = total;
      for (int t = 0; t < T; t++) {
        uint32_t& h = counts[(size_t)t * B + b];
        const uint32_t v = h;
        h = total;
        total += v;
      }
      len[b] = total - start[b];
    }
    start[B] = total;
    if (total == 0) {
      for (int d = 0; d < c && j != G - 1; d++) acc = acc.dbl();
      continue;
    }
    MsmWorkspace::grow(ws.entries, total);
    uint32_t* entries = ws.entries.data();
    Aff* sums = MsmWorkspace::sized<Aff>(ws.sums, B);
    // 3. Scatter (point index, sign) by bucket.
    forkJoin(T, [&](int t) {
      size_t b0, b1;
      splitRange(n, T, t, b0, b1);
      uint32_t* cursor = counts + (size_t)t * B;
      for (size_t i = b0; i < b1; i++) {
        if (!present[i]) continue;
        const int32_t* d = digits + i * W;
        for (int k = 0, w = j; k < K && w < W; k++, w += G) {
          const int32_t v = d[w];
          if (v == 0) continue;
          const uint32_t idx = (uint32_t)(i * K + k);
          entries[cursor[(v < 0 ? -v : v) - 1]++] = v < 0 ? (idx | 0x80000000u) : idx;
        }
      }
    });
    // 4. Each thread takes a bucket range with about total / T points. It sums its buckets a run
    //    at a time (the run's points gathered into a buffer that stays in L2 through every round
    //    of pairwise additions), then reduces them to (Σ (b - lo + 1)·B_b, Σ B_b).
    std::vector<size_t> cut(T + 1, B);
    cut[0] = 0;
    {
      int t = 1;
      for (size_t b = 0; b < B && t < T; b++)
        while (t < T && start[b + 1] >= (uint64_t)total * t / T) cut[t++] = b + 1;
    }
    std::vector<Jac> weighted(T), plain(T);
    forkJoin(T, [&](int t) {
      const size_t lo = cut[t], hi = cut[t + 1];
      MsmWorkspace::PerThread& pt = ws.perThread[t];
      constexpr size_t RUN = (192 * 1024) / sizeof(Aff);
      size_t b = lo;
      while (b < hi) {
        size_t e = b, count = 0;
        while (e < hi && (count == 0 || count + len[e] <= RUN)) count += len[e++];
        Aff* L = MsmWorkspace::sized<Aff>(pt.chunk, count);
        if (pt.chunkStart.size() < e - b) {
          pt.chunkStart.resize(e - b);
          pt.chunkLen.resize(e - b);
        }
        uint32_t* ls = pt.chunkStart.data();
        uint32_t* ll = pt.chunkLen.data();
        const uint32_t base = start[b];
        for (size_t k = b; k < e; k++) {
          ls[k - b] = start[k] - base;
          ll[k - b] = len[k];
        }
        const uint32_t* en = entries + base;
        for (size_t x = 0; x < count; x++) {
          if (x + 8 < count) __builtin_prefetch(&table[en[x + 8] & 0x7fffffffu]);
          const uint32_t v = en[x];
          const Aff& P = table[v & 0x7fffffffu];
          L[x] = (v & 0x80000000u) ? P.negated() : P;
        }
        detail::accumulateBuckets<C>(L, ls, ll, 0, e - b, pt, cancel);
        for (size_t k = b; k < e; k++) sums[k] = ll[k - b] != 0 ? L[ls[k - b]] : Aff::infinity();
        b = e;
      }
      Jac running = Jac::infinity(), sum = Jac::infinity();
      for (size_t k = hi; k-- > lo;) {
        running = running.addAffine(sums[k]);
        sum = sum.add(running);
      }
      weighted[t] = sum;
      plain[t] = running;
    });
    Jac roundSum = Jac::infinity();
    for (int t = 0; t < T; t++) {
      roundSum = roundSum.add(weighted[t]);
      if (cut[t] != 0) roundSum = roundSum.add(detail::timesSmall<C>(plain[t], cut[t]));
    }
    if (j != G - 1)
      for (int d = 0; d < c; d++) acc = acc.dbl();
    acc = acc.add(roundSum);
  }
  return acc;
}

}  // namespace MZK_KERNEL
}  // namespace mzk
