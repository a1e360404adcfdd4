// A development Groth16 setup made directly from fresh toxic waste: τ, α, β, δ drawn from the OS
// CSPRNG here, used, and wiped. Whoever runs it could forge proofs (they saw the waste), which is
// why mzk marks such circuits development_only; in exchange no powers-of-tau file is needed and
// any circuit size takes seconds to minutes instead of snarkjs's hours.
//
// The key is the one snarkjs's `zkey new` (from a ptau of this τ, α, β) followed by one `zkey
// contribute` (δ) would write, section for section:
//   IC_j  = (β·u_j(τ) + α·v_j(τ) + w_j(τ))·G1              j ≤ nPublic (γ = 1, as snarkjs fixes it)
//   C_j   = (β·u_j(τ) + α·v_j(τ) + w_j(τ))/δ·G1            j > nPublic
//   A_j   = u_j(τ)·G1, B1_j = v_j(τ)·G1, B2_j = v_j(τ)·G2
//   H_i   = L'_{2i+1}(τ)/δ·G1, L' the Lagrange basis of the 2n-point domain (the odd points are
//           the coset the prover evaluates A·B − C on)
// where u_j(τ) = Σ_c A[c][j]·L_c(τ) over the n-point domain, with snarkjs's extra constraints
// A[nConstraints + s][s] = 1 for every public signal s (so the public inputs are bound). Everything
// is computed as scalars, then turned into points by fixed-base multiplication (one table per
// group, w-bit windows, one mixed addition per window) and batch normalisation (Montgomery's
// trick), on the calling thread's team (parallel.hpp).
//
// The MPC-params section holds snarkjs's circuit hash (BLAKE2b of the key before any contribution,
// δ = 1, and of the τ^i·(τ^n − 1)·G1 points snarkjs hashes for H) and one contribution whose secret
// is δ, with its proof of knowledge, so `snarkjs zkey verify` can check the key against the ptau
// written beside it (ptauPath).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "blake2b.hpp"
#include "codec.hpp"
#include "curve.hpp"
#include "kernel.hpp"
#include "ntt.hpp"
#include "parallel.hpp"
#include "r1cs.hpp"
#include "random.hpp"
#include "setup.hpp"
#include "zkey_write.hpp"

namespace mzk {
namespace MZK_KERNEL {
namespace setup {

static_assert(sizeof(G1Affine) == 64 && sizeof(G2Affine) == 128, "points are written in their in-memory (LEM) form");

inline double nowMs() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/** Overwrites memory the compiler may not optimise the store away from (toxic waste and its images). */
inline void wipe(void* p, size_t n) {
  volatile uint8_t* v = static_cast<volatile uint8_t*>(p);
  for (size_t i = 0; i < n; i++) v[i] = 0;
}
template <class T>
void wipe(std::vector<T>& v) {
  if (!v.empty()) wipe(v.data(), v.size() * sizeof(T));
  v.clear();
  v.shrink_to_fit();
}

/** A vector of secret values (the toxic waste's images): overwritten when it goes, also on an exception. */
template <class T>
struct SecretVector : std::vector<T> {
  using std::vector<T>::vector;
  SecretVector() = default;
  SecretVector(const SecretVector&) = delete;
  SecretVector& operator=(const SecretVector&) = delete;
  ~SecretVector() {
    if (!this->empty()) wipe(this->data(), this->size() * sizeof(T));
  }
};

/** τ, α, β, δ and 1/δ, overwritten when they go out of scope, however the setup ends. */
struct ToxicWaste {
  Fr tau, alpha, beta, delta, deltaInv;
  ToxicWaste() = default;
  ToxicWaste(const ToxicWaste&) = delete;
  ToxicWaste& operator=(const ToxicWaste&) = delete;
  ~ToxicWaste() { wipe(this, sizeof *this); }
};

/** A uniformly random nonzero element of Fr, from the OS CSPRNG. */
inline Fr randomFr() {
  for (;;) {
    u64 plain[4];
    randomScalar(plain);
    const Fr x = Fr::fromPlain(plain);
    wipe(plain, sizeof plain);
    if (!x.isZero()) return x;
  }
}

inline G1Affine g1Generator() {
  const u64 one[4] = {1, 0, 0, 0}, two[4] = {2, 0, 0, 0};
  return G1Affine{Fq::fromPlain(one), Fq::fromPlain(two)};
}
inline G2Affine g2Generator() {
  static const u64 X0[4] = {0x46debd5cd992f6edULL, 0x674322d4f75edaddULL, 0x426a00665e5c4479ULL, 0x1800deef121f1e76ULL};
  static const u64 X1[4] = {0x97e485b7aef312c2ULL, 0xf1aa493335a9e712ULL, 0x7260bfb731fb5d25ULL, 0x198e9393920d483aULL};
  static const u64 Y0[4] = {0x4ce6cc0166fa7daaULL, 0xe3d1e7690c43d37bULL, 0x4aab71808dcb408fULL, 0x12c85ea5db8c6debULL};
  static const u64 Y1[4] = {0x55acdadcd122975bULL, 0xbc4b313370b38ef3ULL, 0xec9e99ad690c3395ULL, 0x090689d0585ff075ULL};
  return G2Affine{Fq2{Fq::fromPlain(X0), Fq::fromPlain(X1)}, Fq2{Fq::fromPlain(Y0), Fq::fromPlain(Y1)}};
}

/**
 * k·G for many k and one fixed G: table[pos][d − 1] = d·2^(w·pos)·G (affine), so k·G is one mixed
 * addition per nonzero w-bit digit of k and no doublings. w grows with the number of points to
 * make (the table's cost, (2^w − 1)·⌈254/w⌉ additions, stays a fraction of the work it saves).
 */
template <class C>
struct FixedBaseTable {
  int w = 0, positions = 0;
  size_t per = 0;
  std::vector<Affine<C>> table;

  void build(const Affine<C>& g, size_t points, int threads) {
    // Cost in multiplications for w-bit windows: ⌈254/w⌉ positions × (2^w table entries at ~16 each,
    // a Jacobian addition and its share of normalising, + one batch-affine addition at ~6 per point).
    double best = 0;
    for (int c = 4; c <= 16; c++) {
      const double cost = std::ceil(254.0 / c) * (std::ldexp(16.0, c) + 6.0 * (double)points);
      if (w == 0 || cost < best) w = c, best = cost;
    }
    positions = (254 + w - 1) / w;
    per = ((size_t)1 << w) - 1;
    table.resize((size_t)positions * per);
    const int T = std::max(1, std::min(threads, positions));
    forkJoin(T, [&](int t) {
      size_t begin, end;
      splitRange((size_t)positions, T, t, begin, end);
      if (begin == end) return;
      Jacobian<C> base = Jacobian<C>::from(g);
      for (size_t d = 0; d < begin * (size_t)w; d++) base = base.dbl();
      std::vector<Jacobian<C>> jac(per);
      std::vector<typename C::F> s1(per), s2(per);
      for (size_t pos = begin; pos < end; pos++) {
        Jacobian<C> acc = base;
        for (size_t d = 0; d < per; d++) {
          jac[d] = acc;
          acc = acc.add(base);
        }
        batchToAffine<C>(jac.data(), table.data() + pos * per, per, s1.data(), s2.data());
        for (int d = 0; d < w; d++) base = base.dbl();
      }
    });
  }

  /** k·G for a plain scalar k < 2^254. */
  Jacobian<C> mul(const u64* k) const {
    Jacobian<C> r = Jacobian<C>::infinity();
    for (int pos = 0; pos < positions; pos++) {
      const u64 d = digit(k, pos);
      if (d != 0) r = r.addAffine(table[(size_t)pos * per + (d - 1)]);
    }
    return r;
  }

  /** Digit `pos` (w bits) of a plain scalar. */
  u64 digit(const u64* k, int pos) const {
    const int bit = pos * w;
    const int limb = bit / 64, off = bit % 64;
    u64 d = k[limb] >> off;
    if (off + w > 64 && limb < 3) d |= k[limb + 1] << (64 - off);
    return d & (((u64)1 << w) - 1);
  }

  /**
   * out[i] = scalars[i]·G (scalars in Montgomery form), affine, on T threads. A chunk of points is
   * accumulated in affine coordinates, one window position at a time: every addition of a round
   * shares one field inversion (Montgomery's trick), so an addition costs about 6 multiplications
   * instead of a mixed Jacobian addition's 11, and nothing is left to normalise at the end. The
   * rare addition of a point to itself or its negation (x equal) goes to the Jacobian path.
   */
  void mulMany(const Fr* scalars, size_t n, Affine<C>* out, int threads) const {
    using F = typename C::F;
    constexpr size_t CHUNK = 1024;
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    const int T = (int)std::max<size_t>(1, std::min<size_t>((size_t)std::max(1, threads), chunks));
    forkJoin(T, [&](int t) {
      size_t begin, end;
      splitRange(chunks, T, t, begin, end);
      std::vector<u64> plain(CHUNK * 4);
      std::vector<uint8_t> state(CHUNK);  // 0: at infinity so far, 1: affine in out[], 2: Jacobian fallback
      std::vector<uint32_t> pending(CHUNK);
      std::vector<F> dx(CHUNK), prefix(CHUNK);
      for (size_t c = begin; c < end; c++) {
        const size_t lo = c * CHUNK, m = std::min(CHUNK, n - lo);
        Affine<C>* acc = out + lo;
        for (size_t i = 0; i < m; i++) {
          scalars[lo + i].toPlain(&plain[i * 4]);
          state[i] = 0;
        }
        for (int pos = 0; pos < positions; pos++) {
          const Affine<C>* row = table.data() + (size_t)pos * per;
          size_t np = 0;
          for (size_t i = 0; i < m; i++) {
            if (state[i] == 2) continue;
            const u64 d = digit(&plain[i * 4], pos);
            if (d == 0) continue;
            const Affine<C>& q = row[d - 1];
            if (state[i] == 0) {
              acc[i] = q;
              state[i] = 1;
              continue;
            }
            const F diff = q.x - acc[i].x;
            if (diff.isZero()) {
              state[i] = 2;
              continue;
            }
            dx[np] = diff;
            pending[np++] = (uint32_t)i;
          }
          if (np == 0) continue;
          // Montgomery's trick over dx[0..np): prefix products, one inversion, then back to front.
          F run = F::one();
          for (size_t j = 0; j < np; j++) {
            prefix[j] = run;
            run = run * dx[j];
          }
          F inv = run.inverse();
          for (size_t j = np; j-- > 0;) {
            const F dxInv = inv * prefix[j];
            inv = inv * dx[j];
            const size_t i = pending[j];
            const Affine<C>& q = row[digit(&plain[i * 4], pos) - 1];
            Affine<C>& p = acc[i];
            const F lambda = (q.y - p.y) * dxInv;
            const F x3 = lambda.squared() - p.x - q.x;
            p.y = lambda * (p.x - x3) - p.y;
            p.x = x3;
          }
        }
        for (size_t i = 0; i < m; i++) {
          if (state[i] == 0) acc[i] = Affine<C>::infinity();
          if (state[i] == 2) acc[i] = mul(&plain[i * 4]).toAffine();
        }
      }
      wipe(plain);
    });
  }
};

/** snarkjs's "uncompressed" form, which its hashes read: coordinates big-endian, plain (c1 before c0 in Fq2); infinity is all zeros. */
inline void putBE(uint8_t* out, const Fq& a) {
  u64 l[4];
  a.toPlain(l);
  for (int i = 0; i < 4; i++)
    for (int b = 0; b < 8; b++) out[i * 8 + b] = (uint8_t)(l[3 - i] >> (56 - 8 * b));
}
inline void uncompressed(const G1Affine& p, uint8_t* out) {
  if (p.isInfinity()) return (void)std::memset(out, 0, 64);
  putBE(out, p.x);
  putBE(out + 32, p.y);
}
inline void uncompressed(const G2Affine& p, uint8_t* out) {
  if (p.isInfinity()) return (void)std::memset(out, 0, 128);
  putBE(out, p.x.c1);
  putBE(out + 32, p.x.c0);
  putBE(out + 64, p.y.c1);
  putBE(out + 96, p.y.c0);
}
template <class C>
void hashPoints(Blake2b& h, const Affine<C>* p, size_t n) {
  uint8_t buf[128];
  const size_t size = sizeof(Affine<C>);
  for (size_t i = 0; i < n; i++) {
    uncompressed(p[i], buf);
    h.update(buf, size);
  }
}
inline void hashU32BE(Blake2b& h, uint32_t v) {
  const uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  h.update(b, 4);
}

/**
 * Lagrange basis values L_i(τ), i < m, on the m-point domain of ω = rootOfUnity(log m):
 * L_i(τ) = (τ^m − 1)/m · ω^i/(τ − ω^i). τ is never a point of the domain (checked by the caller).
 * `odd` selects the odd points of the 2m-point domain instead (the H coset): ω₂ₘ^(2i+1).
 */
inline void lagrange(const Fr& tau, int logM, bool odd, std::vector<Fr>& out, int threads) {
  const size_t m = (size_t)1 << logM;
  const int logDomain = odd ? logM + 1 : logM;
  const size_t domain = (size_t)1 << logDomain;
  const Fr w = rootOfUnity(logDomain);
  // factor = (τ^domain − 1)/domain
  Fr tn = tau;
  for (int i = 0; i < logDomain; i++) tn = tn.squared();
  const Fr factor = (tn - Fr::one()) * Fr::fromU64((u64)domain).inverse();
  const Fr start = odd ? w : Fr::one();
  const Fr step = odd ? w.squared() : w;
  out.resize(m);
  const int T = m >= 4096 ? std::max(1, threads) : 1;
  forkJoin(T, [&](int t) {
    size_t begin, end;
    splitRange(m, T, t, begin, end);
    if (begin == end) return;
    // point_i = start · step^i
    u64 e[4] = {(u64)begin, 0, 0, 0};
    Fr point = start * step.pow(e);
    std::vector<Fr> pts(end - begin);
    SecretVector<Fr> den(end - begin), scratch(end - begin);
    for (size_t i = begin; i < end; i++) {
      pts[i - begin] = point;
      den[i - begin] = tau - point;
      point *= step;
    }
    batchInverse<Fr>(den.data(), end - begin, scratch.data());
    for (size_t i = begin; i < end; i++) out[i] = factor * pts[i - begin] * den[i - begin];
    wipe(den);
    wipe(scratch);
  });
}

/** The prepared powers of tau (snarkjs "ptau", power p) of the same τ, α, β: for `snarkjs zkey verify`. */
inline void writePtau(const std::string& path, int power, const Fr& tau, const Fr& alpha, const Fr& beta, const FixedBaseTable<G1>& t1,
                      const FixedBaseTable<G2>& t2, int threads) {
  BinWriter w(path, "ptau", 1, 11);
  w.startSection(1);
  w.u32(32);
  w.write(BN254_Q_LIMBS, 32);
  w.u32((uint32_t)power);
  w.u32((uint32_t)power);
  w.endSection();
  const size_t m = (size_t)1 << power;
  // Reserved up front: a vector that grows frees its old storage without overwriting it.
  SecretVector<Fr> pw(2 * m - 1), scaled;
  scaled.reserve(2 * m - 1);
  Fr x = Fr::one();
  for (size_t i = 0; i < pw.size(); i++) {
    pw[i] = x;
    x *= tau;
  }
  std::vector<G1Affine> p1;
  std::vector<G2Affine> p2;
  auto g1Section = [&](uint32_t type, const std::vector<Fr>& s) {
    p1.resize(s.size());
    t1.mulMany(s.data(), s.size(), p1.data(), threads);
    w.startSection(type);
    w.write(p1.data(), p1.size() * 64);
    w.endSection();
  };
  auto g2Section = [&](uint32_t type, const std::vector<Fr>& s) {
    p2.resize(s.size());
    t2.mulMany(s.data(), s.size(), p2.data(), threads);
    w.startSection(type);
    w.write(p2.data(), p2.size() * 128);
    w.endSection();
  };
  auto times = [&](const std::vector<Fr>& s, const Fr& k, size_t n) -> const std::vector<Fr>& {
    scaled.resize(n);
    for (size_t i = 0; i < n; i++) scaled[i] = s[i] * k;
    return scaled;
  };
  g1Section(2, pw);
  pw.resize(m);
  g2Section(3, pw);
  g1Section(4, times(pw, alpha, m));
  g1Section(5, times(pw, beta, m));
  {
    SecretVector<Fr> b(1, beta);
    g2Section(6, b);
  }
  w.startSection(7);
  w.u32(0);
  w.endSection();
  // Sections 12–15: for every domain size 2^k, k ≤ power, the Lagrange basis at τ (τ in G1, G2; α·, β· in G1).
  SecretVector<Fr> lag, all;
  lag.reserve(m);
  all.reserve(2 * m - 1);
  for (int k = 0; k <= power; k++) {
    lagrange(tau, k, false, lag, threads);
    all.insert(all.end(), lag.begin(), lag.end());
  }
  g1Section(12, all);
  g2Section(13, all);
  g1Section(14, times(all, alpha, all.size()));
  g1Section(15, times(all, beta, all.size()));
  wipe(pw);
  wipe(scaled);
  wipe(lag);
  wipe(all);
  w.close();
}

}  // namespace setup

inline DevSetupResult setupDevelopment(const DevSetupOptions& options) {
  using namespace setup;
  DevSetupResult result;
  const int threads = std::max(1, options.threads);
  if (!options.hashToG2) throw InputError("setup: hashToG2 is required (the contribution's proof of knowledge)");
  double t0 = nowMs();
  const R1cs r1cs(options.r1csPath);
  const uint32_t nVars = r1cs.nWires, nPublic = r1cs.nPublic(), nConstraints = r1cs.nConstraints;
  // snarkjs: cirPower = ⌊log2(nConstraints + nPublic)⌋ + 1, the domain holds the extra public constraints.
  const uint64_t rows = (uint64_t)nConstraints + nPublic;
  int logN = 0;
  while (rows > 0 && ((uint64_t)1 << (logN + 1)) <= rows) logN++;
  logN += 1;
  if (logN >= FR_TWO_ADICITY) throw InputError("r1cs: " + std::to_string(nConstraints) + " constraints need a domain above 2^27, which this setup does not support");
  const size_t n = (size_t)1 << logN;
  const int ptauPower = logN + 1;
  if (!options.ptauPath.empty() && ptauPower > 18) {
    throw InputError("setup: a ptau beside the key is only written for circuits up to 2^17 constraints (power 18), this one needs power " +
                     std::to_string(ptauPower));
  }
  result.nVars = nVars;
  result.nPublic = nPublic;
  result.nConstraints = nConstraints;
  result.domainSize = (uint32_t)n;
  result.ptauPower = options.ptauPath.empty() ? 0 : (uint32_t)ptauPower;

  // Toxic waste. τ off both domains (the n-point one and its odd coset), else L_i(τ) divides by zero.
  ToxicWaste waste;
  Fr &tau = waste.tau, &alpha = waste.alpha, &beta = waste.beta, &delta = waste.delta, &deltaInv = waste.deltaInv;
  alpha = randomFr();
  beta = randomFr();
  delta = randomFr();
  for (;;) {
    tau = randomFr();
    Fr t2n = tau;
    for (int i = 0; i <= logN; i++) t2n = t2n.squared();
    if (t2n != Fr::one()) break;
  }
  deltaInv = delta.inverse();

  SecretVector<Fr> L, u(nVars, Fr::zero()), v(nVars, Fr::zero()), wv(nVars, Fr::zero());
  lagrange(tau, logN, false, L, threads);

  BinWriter zkey(options.zkeyPath, "zkey", 1, 10);
  writeZkeyProtocol(zkey);
  const G1Affine g1 = g1Generator();
  const G2Affine g2 = g2Generator();
  FixedBaseTable<G1> t1;
  FixedBaseTable<G2> t2;
  double tt = nowMs();
  t1.build(g1, std::max<size_t>(nVars, n) * 6, threads);
  t2.build(g2, nVars, threads);
  result.msTables = nowMs() - tt;

  // Header: α₁, β₁, β₂, γ₂ = G2, δ₁, δ₂; the circuit hash starts with the same points at δ = 1.
  Blake2b cs;
  uint8_t header[576], ubuf[128];
  {
    u64 k[4];
    alpha.toPlain(k);
    const G1Affine a1 = t1.mul(k).toAffine();
    beta.toPlain(k);
    const G1Affine b1 = t1.mul(k).toAffine();
    const G2Affine b2 = t2.mul(k).toAffine();
    delta.toPlain(k);
    const G1Affine d1 = t1.mul(k).toAffine();
    const G2Affine d2 = t2.mul(k).toAffine();
    wipe(k, sizeof k);
    std::memcpy(header, &a1, 64);
    std::memcpy(header + 64, &b1, 64);
    std::memcpy(header + 128, &b2, 128);
    std::memcpy(header + 256, &g2, 128);
    std::memcpy(header + 384, &d1, 64);
    std::memcpy(header + 448, &d2, 128);
    uncompressed(a1, ubuf), cs.update(ubuf, 64);
    uncompressed(b1, ubuf), cs.update(ubuf, 64);
    uncompressed(b2, ubuf), cs.update(ubuf, 128);
    uncompressed(g2, ubuf), cs.update(ubuf, 128);
    uncompressed(g1, ubuf), cs.update(ubuf, 64);
    uncompressed(g2, ubuf), cs.update(ubuf, 128);
  }
  writeZkeyGroth16Header(zkey, nVars, nPublic, (uint32_t)n, header);

  // Coefficients (section 4): A's and B's terms in file order, then A[nConstraints + s][s] = 1; values
  // stored as v·R² mod r (what snarkjs writes: the prover multiplies them by plain witness values).
  // The same walk accumulates u, v, w.
  zkey.startSection(4);
  zkey.u32((uint32_t)(r1cs.termsA + r1cs.termsB + nPublic + 1));
  {
    std::vector<uint8_t> buf;
    buf.reserve(1 << 20);
    auto put = [&](uint32_t matrix, uint32_t constraint, uint32_t signal, const Fr& value) {
      const Fr r2 = Fr::fromPlain(value.v);  // limbs of value·R, entered once more: value·R²
      uint8_t rec[44];
      std::memcpy(rec, &matrix, 4);
      std::memcpy(rec + 4, &constraint, 4);
      std::memcpy(rec + 8, &signal, 4);
      std::memcpy(rec + 12, r2.v, 32);
      buf.insert(buf.end(), rec, rec + 44);
      if (buf.size() >= (1 << 20)) {
        zkey.write(buf.data(), buf.size());
        buf.clear();
      }
    };
    std::vector<Fr>* acc[3] = {&u, &v, &wv};
    r1cs.forEachTerm([&](int m, uint32_t c, uint32_t wire, const uint8_t* coef) {
      u64 plain[4];
      std::memcpy(plain, coef, 32);
      const Fr value = Fr::fromPlain(plain);
      (*acc[m])[wire] += value * L[c];
      if (m < 2) put((uint32_t)m, c, wire, value);
    });
    for (uint32_t s = 0; s <= nPublic; s++) {
      u[s] += L[nConstraints + s];
      put(0, nConstraints + s, s, Fr::one());
    }
    zkey.write(buf.data(), buf.size());
  }
  zkey.endSection();
  wipe(L);

  // IC and C share β·u + α·v + w; then u, v are the A and B scalars.
  SecretVector<Fr> k(nVars);
  for (uint32_t j = 0; j < nVars; j++) k[j] = beta * u[j] + alpha * v[j] + wv[j];
  wipe(wv);
  result.msScalars = nowMs() - t0;
  tt = nowMs();

  std::vector<G1Affine> p1;
  std::vector<G2Affine> p2;
  auto writeG1 = [&](uint32_t type, const Fr* s, size_t count, bool hash) {
    p1.resize(count);
    t1.mulMany(s, count, p1.data(), threads);
    zkey.startSection(type);
    zkey.write(p1.data(), count * 64);
    zkey.endSection();
    if (hash) {
      hashU32BE(cs, (uint32_t)count);
      hashPoints<G1>(cs, p1.data(), count);
    }
  };
  auto hashG1Only = [&](const Fr* s, size_t count) {
    p1.resize(count);
    t1.mulMany(s, count, p1.data(), threads);
    hashU32BE(cs, (uint32_t)count);
    hashPoints<G1>(cs, p1.data(), count);
  };

  writeG1(3, k.data(), (size_t)nPublic + 1, true);  // IC (γ = 1)

  // H: L'_{2i+1}(τ)/δ in the key; the circuit hash reads the δ = 1 key's τ^i·(τ^n − 1), i < n − 1.
  {
    SecretVector<Fr> h;
    lagrange(tau, logN, true, h, threads);
    for (auto& x : h) x *= deltaInv;
    writeG1(9, h.data(), n, false);
    Fr tn = tau;
    for (int i = 0; i < logN; i++) tn = tn.squared();
    Fr x = tn - Fr::one();
    for (size_t i = 0; i + 1 < n; i++) {
      h[i] = x;
      x *= tau;
    }
    hashG1Only(h.data(), n - 1);
    wipe(h);
  }
  // C: hashed at δ = 1, written at 1/δ.
  {
    const size_t nC = (size_t)nVars - nPublic - 1;
    SecretVector<Fr> c(k.begin() + nPublic + 1, k.end());
    hashG1Only(c.data(), nC);
    for (auto& x : c) x *= deltaInv;
    writeG1(8, c.data(), nC, false);
    wipe(c);
  }
  wipe(k);
  writeG1(5, u.data(), nVars, true);  // A
  wipe(u);
  writeG1(6, v.data(), nVars, true);  // B1
  p2.resize(nVars);                   // B2
  t2.mulMany(v.data(), nVars, p2.data(), threads);
  wipe(v);
  zkey.startSection(7);
  zkey.write(p2.data(), (size_t)nVars * 128);
  zkey.endSection();
  hashU32BE(cs, nVars);
  hashPoints<G2>(cs, p2.data(), nVars);
  p1.clear();
  p1.shrink_to_fit();
  p2.clear();
  p2.shrink_to_fit();
  cs.digest(result.csHash);

  // MPC params (section 10): the circuit hash and one contribution, δ, with snarkjs's proof of
  // knowledge: g1_s random, g1_sx = δ·g1_s, transcript = BLAKE2b(csHash ‖ g1_s ‖ g1_sx),
  // g2_spx = δ·hashToG2(transcript); deltaAfter = δ₁.
  {
    const Fr s = randomFr();
    u64 kk[4];
    s.toPlain(kk);
    const G1Affine g1s = t1.mul(kk).toAffine();
    delta.toPlain(kk);
    const G1Affine g1sx = G1Jac::from(g1s).mul(kk).toAffine();
    Blake2b th;
    th.update(result.csHash, 64);
    uncompressed(g1s, ubuf), th.update(ubuf, 64);
    uncompressed(g1sx, ubuf), th.update(ubuf, 64);
    uint8_t transcript[64], spBytes[128];
    th.digest(transcript);
    options.hashToG2(transcript, spBytes);
    G2Affine sp;
    if (!readG2(spBytes, sp) || sp.isInfinity()) throw InputError("setup: hashToG2 returned a point that is not on the twist");
    const G2Affine spx = G2Jac::from(sp).mul(kk).toAffine();
    wipe(kk, sizeof kk);
    zkey.startSection(10);
    zkey.write(result.csHash, 64);
    zkey.u32(1);
    zkey.write(header + 384, 64);  // deltaAfter = δ₁
    zkey.write(&g1s, 64);
    zkey.write(&g1sx, 64);
    zkey.write(&spx, 128);
    zkey.write(transcript, 64);
    zkey.u32(0);  // type 0: a contribution from entropy (not a beacon)
    const std::string name = options.contributionName.substr(0, 64);
    if (name.empty()) {
      zkey.u32(0);
    } else {
      zkey.u32((uint32_t)(2 + name.size()));
      const uint8_t tag[2] = {1, (uint8_t)name.size()};  // parameter 1: the name
      zkey.write(tag, 2);
      zkey.write(name.data(), name.size());
    }
    zkey.endSection();
  }
  zkey.close();
  result.msPoints = nowMs() - tt;

  if (!options.ptauPath.empty()) {
    tt = nowMs();
    writePtau(options.ptauPath, ptauPower, tau, alpha, beta, t1, t2, threads);
    result.msPtau = nowMs() - tt;
  }
  return result;
}

}  // namespace MZK_KERNEL
}  // namespace mzk
