// The native phase 2 (phase2.hpp): snarkjs's `zkey new` from an r1cs and a prepared ptau.
//
// A Groth16 key's points are sums over the r1cs: signal s's A point is Σ a_cs·L_c(τ)·G over the
// constraints c where s appears in A, with L_c the Lagrange points the ptau's phase-2 preparation
// stored (sections 12–15: τ, ατ, βτ in G1 and τ in G2, for every power of two up to the ceremony's).
// So nothing here needs τ; the work is one scalar multiplication per r1cs coefficient and point,
// which snarkjs does as small multi-exponentiations in WebAssembly. H is a copy: the odd points of
// the Lagrange basis of twice the domain (section 12 one level up), which are the
// (τ^n − 1)·L_i-style points snarkjs's prover expects on the odd coset.
//
// The key must be byte-identical to snarkjs's so that `snarkjs zkey verify` (which runs newZKey
// itself and compares) accepts it and its contributions: the same section order (1, 2, 4, 3, 9, 8,
// 5, 6, 7, 10), affine points in Montgomery little-endian with infinity as (0, 0), the coefficients
// as c·R² mod r, and the circuit hash fed exactly as snarkjs feeds it (points big-endian, plain).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "binfile.hpp"
#include "blake2b.hpp"
#include "codec.hpp"
#include "curve.hpp"
#include "kernel.hpp"
#include "parallel.hpp"
#include "phase2.hpp"
#include "r1cs.hpp"
#include "random.hpp"

namespace mzk {
namespace MZK_KERNEL {
namespace phase2 {

constexpr BinFormat PTAU_FILE{"ptau", "a ptau file", 1, "the ptau", true};
constexpr BinFormat PHASE2_ZKEY_FILE{"zkey", "a zkey file", 1, "the zkey", true};

/** snarkjs's log2 (misc.js): the index of the highest set bit of a 32-bit value, 0 for 0. */
inline uint32_t log2u32(uint32_t v) {
  uint32_t r = 0;
  while (v >>= 1) r++;
  return r;
}

/** One r1cs term: the constraint it belongs to and where its coefficient lies in the r1cs. */
struct Term {
  const uint8_t* coef;
  uint32_t constraint;
};

/** Terms by signal (compressed rows): the terms of signal s are terms[start[s] .. start[s + 1]). */
struct BySignal {
  std::vector<uint64_t> start;
  std::vector<Term> terms;
};

const u64 ONE_PLAIN[4] = {1, 0, 0, 0};

inline G1Affine loadG1(const uint8_t* p) {
  G1Affine a;
  std::memcpy(a.x.v, p, 32);
  std::memcpy(a.y.v, p + 32, 32);
  return a;
}
inline G2Affine loadG2(const uint8_t* p) {
  G2Affine a;
  std::memcpy(a.x.c0.v, p, 32);
  std::memcpy(a.x.c1.v, p + 32, 32);
  std::memcpy(a.y.c0.v, p + 64, 32);
  std::memcpy(a.y.c1.v, p + 96, 32);
  return a;
}
inline void storeG1(uint8_t* p, const G1Affine& a) {
  std::memcpy(p, a.x.v, 32);
  std::memcpy(p + 32, a.y.v, 32);
}
inline void storeG2(uint8_t* p, const G2Affine& a) {
  std::memcpy(p, a.x.c0.v, 32);
  std::memcpy(p + 32, a.x.c1.v, 32);
  std::memcpy(p + 64, a.y.c0.v, 32);
  std::memcpy(p + 96, a.y.c1.v, 32);
}
inline G1Affine loadPoint(const uint8_t* p, G1*) { return loadG1(p); }
inline G2Affine loadPoint(const uint8_t* p, G2*) { return loadG2(p); }
inline void storePoint(uint8_t* p, const G1Affine& a) { storeG1(p, a); }
inline void storePoint(uint8_t* p, const G2Affine& a) { storeG2(p, a); }

/** k < r/2 + 1 (so r − k is the shorter of k and −k for the others). */
inline bool belowHalf(const u64* k) {
  // (r − 1)/2
  static const u64 H[4] = {0xa1f0fac9f8000000ULL, 0x9419f4243cdcb848ULL, 0xdc2822db40c0ac2eULL, 0x183227397098d014ULL};
  for (int i = 3; i >= 0; i--) {
    if (k[i] < H[i]) return true;
    if (k[i] > H[i]) return false;
  }
  return true;
}

/**
 * acc += k·P for a plain canonical scalar k. Circom's coefficients are mostly ±1 and small
 * constants, so the multiplication runs over the bits of min(k, r − k) only: ±1 costs one mixed
 * addition, a 10-bit constant ten doublings.
 */
template <class C>
inline void addScaled(Jacobian<C>& acc, const Affine<C>& P, const u64* kIn) {
  u64 k[4];
  std::memcpy(k, kIn, 32);
  if ((k[0] | k[1] | k[2] | k[3]) == 0 || P.isInfinity()) return;
  Affine<C> base = P;
  if (!belowHalf(k)) {
    unsigned char borrow = 0;
    for (int i = 0; i < 4; i++) k[i] = subb(FrParams::P[i], k[i], borrow);
    base = P.negated();
  }
  int top = 255;
  while (((k[top / 64] >> (top % 64)) & 1) == 0) top--;
  if (top == 0) {
    acc = acc.addAffine(base);
    return;
  }
  if (top < 96) {
    Jacobian<C> r = Jacobian<C>::from(base);
    for (int i = top - 1; i >= 0; i--) {
      r = r.dbl();
      if ((k[i / 64] >> (i % 64)) & 1) r = r.addAffine(base);
    }
    acc = acc.add(r);
    return;
  }
  acc = acc.add(Jacobian<C>::from(base).mul(k, 4));
}

/**
 * Computes count points, point j being sum(j) (a Jacobian), and writes them affine at out + j·size.
 * Signals are handed out in small blocks from one counter, since a few signals (the constant one,
 * a circuit's inputs) carry most of the terms; each block is normalised with one inversion.
 */
template <class C, class Sum>
void computePoints(uint8_t* out, size_t count, size_t pointSize, int threads, const Sum& sum) {
  constexpr size_t BLOCK = 256;
  std::atomic<size_t> next{0};
  forkJoin(threads, [&](int) {
    std::vector<Jacobian<C>> jac(BLOCK);
    std::vector<Affine<C>> aff(BLOCK);
    std::vector<typename C::F> s1(BLOCK), s2(BLOCK);
    for (;;) {
      const size_t b = next.fetch_add(BLOCK);
      if (b >= count) return;
      const size_t e = std::min(count, b + BLOCK);
      for (size_t j = b; j < e; j++) jac[j - b] = sum(j);
      batchToAffine<C>(jac.data(), aff.data(), e - b, s1.data(), s2.data());
      for (size_t j = b; j < e; j++) storePoint(out + j * pointSize, aff[j - b]);
    }
  });
}

/** A coordinate out of Montgomery form, big-endian: snarkjs's "uncompressed" form that it hashes. */
inline void fqToBE(uint8_t* out, const Fq& f) {
  u64 l[4];
  f.toPlain(l);
  for (int i = 0; i < 4; i++)
    for (int b = 0; b < 8; b++) out[i * 8 + b] = (uint8_t)(l[3 - i] >> (56 - 8 * b));
}

/** LEM (Montgomery little-endian, as stored) to snarkjs's uncompressed form; infinity stays all zero. */
inline void g1ToU(uint8_t* out, const uint8_t* lem) {
  const G1Affine a = loadG1(lem);
  if (a.isInfinity()) {
    std::memset(out, 0, 64);
    return;
  }
  fqToBE(out, a.x);
  fqToBE(out + 32, a.y);
}
inline void g2ToU(uint8_t* out, const uint8_t* lem) {
  const G2Affine a = loadG2(lem);
  if (a.isInfinity()) {
    std::memset(out, 0, 128);
    return;
  }
  // The whole Fq2 coordinate is byte-reversed, so c1 comes first.
  fqToBE(out, a.x.c1);
  fqToBE(out + 32, a.x.c0);
  fqToBE(out + 64, a.y.c1);
  fqToBE(out + 96, a.y.c0);
}

inline void hashU32BE(Blake2b& h, uint32_t v) {
  const uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  h.update(b, 4);
}

/** Hashes count stored points (LEM) in snarkjs's uncompressed form, converted in parallel chunks. */
inline void hashPoints(Blake2b& h, const uint8_t* points, size_t count, size_t pointSize, int threads) {
  constexpr size_t CHUNK = 1 << 14;
  std::vector<uint8_t> buf(CHUNK * pointSize);
  for (size_t b = 0; b < count; b += CHUNK) {
    const size_t n = std::min(CHUNK, count - b);
    forkJoin(threads, [&](int t) {
      size_t lo, hi;
      splitRange(n, threads, t, lo, hi);
      for (size_t i = lo; i < hi; i++) {
        if (pointSize == 64)
          g1ToU(buf.data() + i * 64, points + (b + i) * 64);
        else
          g2ToU(buf.data() + i * 128, points + (b + i) * 128);
      }
    });
    h.update(buf.data(), n * pointSize);
  }
}

inline void put32(uint8_t*& p, uint32_t v) {
  for (int i = 0; i < 4; i++) *p++ = (uint8_t)(v >> (8 * i));
}
inline void put64(uint8_t*& p, uint64_t v) {
  for (int i = 0; i < 8; i++) *p++ = (uint8_t)(v >> (8 * i));
}
inline uint8_t* sectionHeader(uint8_t* p, uint32_t id, uint64_t size) {
  put32(p, id);
  put64(p, size);
  return p;
}

}  // namespace phase2

inline Phase2Info newZkey(const R1cs& r1cs, const uint8_t* ptauData, size_t ptauLength, Phase2Output& output, int threads, const uint8_t* pastEnd) {
  using namespace phase2;
  if (threads < 1) threads = 1;
  // --- the ptau: header and the sections this circuit needs, sizes checked before any read ----
  const BinFile ps(ptauData, ptauLength, PTAU_FILE);
  const BinSection& ph = ps.section(1, "header");
  if (ph.size < 4) ps.fail("'s header section is too short");
  const uint32_t n8q = le32(ph.data);
  if (ph.size != 4 + (uint64_t)n8q + 8) ps.fail("'s header section has " + std::to_string(ph.size) + " bytes, not 4 + n8 + 8");
  if (n8q != 32 || !sameModulus<FqParams>(ph.data + 4))
    ps.fail(" is for another curve (base field of " + std::to_string(n8q * 8) + " bits, not BN254's q): mzk sets up bn128 circuits only");
  const uint32_t power = le32(ph.data + 4 + n8q);
  if (power < 1 || power > 28) ps.fail("'s power " + std::to_string(power) + " is outside 1..28");
  if (!ps.has(12)) ps.fail(" is not prepared for phase 2 (it has no Lagrange sections 12-15): run `snarkjs powersoftau prepare phase2` on it first");
  const uint64_t nTau = ((uint64_t)2 << power) - 1;
  auto sized = [&](uint32_t id, uint64_t expect, const char* name) -> const uint8_t* {
    const BinSection& s = ps.section(id, name);
    if (s.size != expect)
      ps.fail("'s section " + std::to_string(id) + " (" + name + ") has " + std::to_string(s.size) + " bytes, a power-" + std::to_string(power) +
              " ptau has " + std::to_string(expect));
    return s.data;
  };
  const uint8_t* tauG1 = sized(2, nTau * 64, "tauG1");
  const BinSection& alphaTau = ps.section(4, "alphaTauG1");
  const BinSection& betaTau = ps.section(5, "betaTauG1");
  const BinSection& beta2 = ps.section(6, "betaG2");
  if (alphaTau.size < 64 || betaTau.size < 64 || beta2.size < 128) ps.fail("'s sections 4-6 are too short for their first point");
  const uint8_t* alphaTauG1 = alphaTau.data;
  const uint8_t* betaTauG1 = betaTau.data;
  const uint8_t* betaG2 = beta2.data;
  const uint8_t* lagG1 = sized(12, (((uint64_t)4 << power) - 1) * 64, "Lagrange tauG1");
  const uint8_t* lagG2 = sized(13, nTau * 128, "Lagrange tauG2");
  const uint8_t* lagAlpha = sized(14, nTau * 64, "Lagrange alphaTauG1");
  const uint8_t* lagBeta = sized(15, nTau * 64, "Lagrange betaTauG1");

  // --- the r1cs (r1cs.hpp: mapped, every term checked when it was opened) ---------------------
  const uint32_t nVars = r1cs.nWires, nConstraints = r1cs.nConstraints, nPublic = r1cs.nPublic();
  const uint64_t sizing = (uint64_t)nConstraints + nPublic;
  if (sizing >= ((uint64_t)1 << 31)) throw InputError("the r1cs has too many constraints for a Groth16 key");
  const uint32_t cirPower = log2u32((uint32_t)sizing) + 1;
  const uint32_t domainSize = 1u << cirPower;
  if (cirPower > power)
    throw InputError("the ptau is too small for the circuit: " + std::to_string(nConstraints) + " constraints + " + std::to_string(nPublic) +
                     " public signals need a domain of 2^" + std::to_string(cirPower) + ", the ptau has power " + std::to_string(power));
  if (cirPower >= 28) throw InputError("the circuit needs a domain of 2^" + std::to_string(cirPower) + ", beyond bn128's 2^27 for this setup");
  // snarkjs's circuit hash of H reads τ^(2n−1) when n > 2^14: one point past a ptau of the same
  // power, whose hashed form only snarkjs's own arithmetic can say (see phase2.hpp).
  const bool readsPastEnd = domainSize > (1u << 14) && cirPower == power;
  if (readsPastEnd && pastEnd == nullptr)
    throw InputError("the ptau has power " + std::to_string(power) + ", exactly the circuit's, and the circuit has more than 2^14 constraints: snarkjs's key hash " +
                     "then reads one point past the ptau's tau section (pass that point, or use a ptau of power " + std::to_string(power + 1) + ")");

  // Terms by signal, for each matrix: counted, then placed, in two walks over the constraints.
  BySignal byA, byB, byC;
  BySignal* by[3] = {&byA, &byB, &byC};
  for (BySignal* m : by) m->start.assign((size_t)nVars + 1, 0);
  r1cs.forEachTerm([&](int m, uint32_t, uint32_t s, const uint8_t*) { by[m]->start[s + 1]++; });
  std::vector<uint64_t> fill[3];
  for (int m = 0; m < 3; m++) {
    for (size_t s = 0; s < nVars; s++) by[m]->start[s + 1] += by[m]->start[s];
    by[m]->terms.resize(by[m]->start[nVars]);
    fill[m].assign(by[m]->start.begin(), by[m]->start.end() - 1);
  }
  r1cs.forEachTerm([&](int m, uint32_t c, uint32_t s, const uint8_t* coef) { by[m]->terms[fill[m][s]++] = Term{coef, c}; });
  for (auto& f : fill) std::vector<uint64_t>().swap(f);
  const uint64_t nCoefs = r1cs.termsA + r1cs.termsB + nPublic + 1;

  // --- the layout of the zkey, sections in snarkjs's order ------------------------------------
  const size_t H2 = 4 + 32 + 4 + 32 + 4 * 3 + 64 * 2 + 128 * 2 + 64 + 128;
  const uint64_t nC = (uint64_t)nVars - nPublic - 1;
  const uint64_t sizes[10] = {4, H2, 4 + nCoefs * 44, (uint64_t)(nPublic + 1) * 64, (uint64_t)domainSize * 64, nC * 64, (uint64_t)nVars * 64, (uint64_t)nVars * 64,
                              (uint64_t)nVars * 128, 64 + 4};
  const uint32_t ids[10] = {1, 2, 4, 3, 9, 8, 5, 6, 7, 10};
  uint64_t total = 12;
  for (uint64_t s : sizes) total += 12 + s;
  uint8_t* const file = output.map((size_t)total);
  uint8_t* body[11];
  {
    uint8_t* p = file;
    std::memcpy(p, "zkey", 4);
    p += 4;
    put32(p, 1);
    put32(p, 10);
    for (int i = 0; i < 10; i++) {
      p = sectionHeader(p, ids[i], sizes[i]);
      body[ids[i]] = p;
      p += sizes[i];
    }
  }
  Blake2b hash;
  uint8_t u[128];

  // Section 1: Groth16. Section 2: the header, α and β from the ptau, γ = δ = the generators.
  {
    uint8_t* p = body[1];
    put32(p, 1);
    p = body[2];
    put32(p, 32);
    std::memcpy(p, FqParams::P, 32);
    p += 32;
    put32(p, 32);
    std::memcpy(p, FrParams::P, 32);
    p += 32;
    put32(p, nVars);
    put32(p, nPublic);
    put32(p, domainSize);
    std::memcpy(p, alphaTauG1, 64);
    g1ToU(u, p);
    hash.update(u, 64);
    p += 64;
    std::memcpy(p, betaTauG1, 64);
    g1ToU(u, p);
    hash.update(u, 64);
    p += 64;
    std::memcpy(p, betaG2, 128);
    g2ToU(u, p);
    hash.update(u, 128);
    p += 128;
    static const u64 G2X0[4] = {0x46debd5cd992f6edULL, 0x674322d4f75edaddULL, 0x426a00665e5c4479ULL, 0x1800deef121f1e76ULL};
    static const u64 G2X1[4] = {0x97e485b7aef312c2ULL, 0xf1aa493335a9e712ULL, 0x7260bfb731fb5d25ULL, 0x198e9393920d483aULL};
    static const u64 G2Y0[4] = {0x4ce6cc0166fa7daaULL, 0xe3d1e7690c43d37bULL, 0x4aab71808dcb408fULL, 0x12c85ea5db8c6debULL};
    static const u64 G2Y1[4] = {0x55acdadcd122975bULL, 0xbc4b313370b38ef3ULL, 0xec9e99ad690c3395ULL, 0x090689d0585ff075ULL};
    const G2Affine g2{Fq2{Fq::fromPlain(G2X0), Fq::fromPlain(G2X1)}, Fq2{Fq::fromPlain(G2Y0), Fq::fromPlain(G2Y1)}};
    const G1Affine g1{Fq::fromU64(1), Fq::fromU64(2)};
    uint8_t g2lem[128], g1lem[64], g2u[128], g1u[64];
    storeG2(g2lem, g2);
    storeG1(g1lem, g1);
    g2ToU(g2u, g2lem);
    g1ToU(g1u, g1lem);
    std::memcpy(p, g2lem, 128);  // γ₂
    std::memcpy(p + 128, g1lem, 64);  // δ₁
    std::memcpy(p + 192, g2lem, 128);  // δ₂
    hash.update(g2u, 128);
    hash.update(g1u, 64);
    hash.update(g2u, 128);
  }

  // Section 4: the A and B coefficients in constraint order (c·R² mod r), then A's 1 for each
  // public signal at the constraint rows past the last.
  {
    uint8_t* p = body[4];
    put32(p, (uint32_t)nCoefs);
    auto coef = [&](uint32_t matrix, uint32_t c, uint32_t s, const u64* k) {
      put32(p, matrix);
      put32(p, c);
      put32(p, s);
      const Fr m = Fr::fromPlain(Fr::fromPlain(k).v);
      std::memcpy(p, m.v, 32);
      p += 32;
    };
    r1cs.forEachTerm([&](int m, uint32_t c, uint32_t s, const uint8_t* bytes) {
      if (m == 2) return;
      u64 k[4];
      std::memcpy(k, bytes, 32);
      coef((uint32_t)m, c, s, k);
    });
    for (uint32_t s = 0; s <= nPublic; s++) coef(0, nConstraints + s, s, ONE_PLAIN);
  }

  // The points: Lagrange bases at the circuit's domain size.
  const size_t lag = (size_t)domainSize - 1;
  auto L1 = [&](uint32_t c) { return loadG1(lagG1 + (lag + c) * 64); };
  auto L2 = [&](uint32_t c) { return loadG2(lagG2 + (lag + c) * 128); };
  auto LA = [&](uint32_t c) { return loadG1(lagAlpha + (lag + c) * 64); };
  auto LB = [&](uint32_t c) { return loadG1(lagBeta + (lag + c) * 64); };
  auto each = [](const BySignal& by, size_t s, auto&& fn) {
    for (uint64_t i = by.start[s]; i < by.start[s + 1]; i++) {
      u64 k[4];
      std::memcpy(k, by.terms[i].coef, 32);
      fn(by.terms[i].constraint, k);
    }
  };
  // IC and C: β·A + α·B + C for each signal (IC: the public ones and the constant one).
  auto cSum = [&](size_t s) {
    G1Jac acc = G1Jac::infinity();
    each(byA, s, [&](uint32_t c, const u64* k) { addScaled(acc, LB(c), k); });
    each(byB, s, [&](uint32_t c, const u64* k) { addScaled(acc, LA(c), k); });
    each(byC, s, [&](uint32_t c, const u64* k) { addScaled(acc, L1(c), k); });
    if (s <= nPublic) acc = acc.addAffine(LB(nConstraints + (uint32_t)s));
    return acc;
  };
  computePoints<G1>(body[3], (size_t)nPublic + 1, 64, threads, cSum);
  hashU32BE(hash, nPublic + 1);
  hashPoints(hash, body[3], (size_t)nPublic + 1, 64, threads);

  // H: the odd points of section 12's level for twice the domain.
  {
    const uint8_t* level = lagG1 + (((size_t)domainSize * 2) - 1) * 64;
    forkJoin(threads, [&](int t) {
      size_t b, e;
      splitRange(domainSize, threads, t, b, e);
      for (size_t i = b; i < e; i++) std::memcpy(body[9] + i * 64, level + (2 * i + 1) * 64, 64);
    });
    // snarkjs hashes τ^(i+n) − τ^i for i < n − 1, in chunks of 2^14 of which the last is not
    // shortened: n points in all once n > 2^14 (the count hashed first stays n − 1).
    const size_t nH = domainSize > (1u << 14) ? domainSize : domainSize - 1;
    hashU32BE(hash, domainSize - 1);
    constexpr size_t CHUNK = 1 << 14;
    std::vector<uint8_t> lem(CHUNK * 64), buf(CHUNK * 64);
    for (size_t b0 = 0; b0 < nH; b0 += CHUNK) {
      const size_t n = std::min(CHUNK, nH - b0);
      forkJoin(threads, [&](int t) {
        size_t lo, hi;
        splitRange(n, threads, t, lo, hi);
        constexpr size_t SUB = 256;
        std::vector<G1Jac> jac(SUB);
        std::vector<G1Affine> aff(SUB);
        std::vector<Fq> s1(SUB), s2(SUB);
        for (size_t i = lo; i < hi; i += SUB) {
          const size_t m = std::min(SUB, hi - i);
          for (size_t j = 0; j < m; j++) {
            const size_t idx = b0 + i + j;
            // The one point past the end (readsPastEnd) is patched in below, already hashed form.
            jac[j] = idx + domainSize < nTau ? G1Jac::from(loadG1(tauG1 + (idx + domainSize) * 64)).addAffine(loadG1(tauG1 + idx * 64).negated())
                                             : G1Jac::infinity();
          }
          batchToAffine<G1>(jac.data(), aff.data(), m, s1.data(), s2.data());
          for (size_t j = 0; j < m; j++) {
            storeG1(lem.data() + (i + j) * 64, aff[j]);
            g1ToU(buf.data() + (i + j) * 64, lem.data() + (i + j) * 64);
          }
        }
      });
      if (b0 + n == nH && readsPastEnd) std::memcpy(buf.data() + (n - 1) * 64, pastEnd, 64);
      hash.update(buf.data(), n * 64);
    }
  }

  computePoints<G1>(body[8], (size_t)nC, 64, threads, [&](size_t j) { return cSum(j + nPublic + 1); });
  hashU32BE(hash, (uint32_t)nC);
  hashPoints(hash, body[8], (size_t)nC, 64, threads);

  computePoints<G1>(body[5], nVars, 64, threads, [&](size_t s) {
    G1Jac acc = G1Jac::infinity();
    each(byA, s, [&](uint32_t c, const u64* k) { addScaled(acc, L1(c), k); });
    if (s <= nPublic) acc = acc.addAffine(L1(nConstraints + (uint32_t)s));
    return acc;
  });
  hashU32BE(hash, nVars);
  hashPoints(hash, body[5], nVars, 64, threads);

  computePoints<G1>(body[6], nVars, 64, threads, [&](size_t s) {
    G1Jac acc = G1Jac::infinity();
    each(byB, s, [&](uint32_t c, const u64* k) { addScaled(acc, L1(c), k); });
    return acc;
  });
  hashU32BE(hash, nVars);
  hashPoints(hash, body[6], nVars, 64, threads);

  computePoints<G2>(body[7], nVars, 128, threads, [&](size_t s) {
    G2Jac acc = G2Jac::infinity();
    each(byB, s, [&](uint32_t c, const u64* k) { addScaled(acc, L2(c), k); });
    return acc;
  });
  hashU32BE(hash, nVars);
  hashPoints(hash, body[7], nVars, 128, threads);

  Phase2Info info;
  hash.digest(info.csHash);
  {
    uint8_t* p = body[10];
    std::memcpy(p, info.csHash, 64);
    p += 64;
    put32(p, 0);
  }
  info.nVars = nVars;
  info.nPublic = nPublic;
  info.nConstraints = nConstraints;
  info.domainSize = domainSize;
  info.power = power;
  info.bytes = total;
  return info;
}

namespace phase2 {

/** Overwrites secret scalars so they do not outlive their use in freed or reused memory. */
inline void wipe(void* p, size_t n) {
  volatile uint8_t* v = static_cast<volatile uint8_t*>(p);
  while (n--) *v++ = 0;
}

/** P·k for every stored G1 point of a section, in place (infinity stays (0, 0)). */
inline void scaleSection(uint8_t* points, size_t count, const u64* k, int limbs, int threads) {
  constexpr size_t BLOCK = 256;
  std::atomic<size_t> next{0};
  forkJoin(threads, [&](int) {
    std::vector<G1Jac> jac(BLOCK);
    std::vector<G1Affine> aff(BLOCK);
    std::vector<Fq> s1(BLOCK), s2(BLOCK);
    for (;;) {
      const size_t b = next.fetch_add(BLOCK);
      if (b >= count) return;
      const size_t e = std::min(count, b + BLOCK);
      for (size_t j = b; j < e; j++) jac[j - b] = G1Jac::from(loadG1(points + j * 64)).mul(k, limbs);
      batchToAffine<G1>(jac.data(), aff.data(), e - b, s1.data(), s2.data());
      for (size_t j = b; j < e; j++) storeG1(points + j * 64, aff[j - b]);
    }
  });
}

}  // namespace phase2

inline void contribute(uint8_t* zkey, size_t length, const HashToG2& hashToG2, int threads, Phase2Contribution& out) {
  using namespace phase2;
  if (threads < 1) threads = 1;
  const BinFile zs(zkey, length, PHASE2_ZKEY_FILE);
  const BinSection& s1 = zs.section(1, "header");
  if (s1.size != 4 || le32(s1.data) != 1) zs.fail(" is not a Groth16 key");
  const BinSection& s2 = zs.section(2, "Groth16 header");
  if (s2.size != 660 || le32(s2.data) != 32 || !sameModulus<FqParams>(s2.data + 4) || le32(s2.data + 36) != 32 || !sameModulus<FrParams>(s2.data + 40))
    zs.fail("'s Groth16 header is not bn128's");
  const uint32_t domainSize = le32(s2.data + 80);
  const BinSection& c = zs.section(8, "C points");
  const BinSection& h = zs.section(9, "H points");
  if (c.size % 64 != 0 || h.size != (uint64_t)domainSize * 64) zs.fail("'s C or H section has the wrong size");
  uint8_t* delta1 = zkey + (s2.data - zkey) + 468;
  uint8_t* delta2 = delta1 + 64;

  u64 delta[4], deltaInv[4], k[4];
  randomScalar(delta);
  while ((delta[0] | delta[1] | delta[2] | delta[3]) == 0) randomScalar(delta);
  randomScalar(k);
  Fr d = Fr::fromPlain(delta);
  Fr di = d.inverse();
  di.toPlain(deltaInv);
  // Every multiplication by the secret δ or δ⁻¹ runs on a freshly blinded scalar (k + m·r, see
  // random.hpp), so its time says nothing about the scalar.
  u64 b[5];
  auto blinded = [&](const u64* scalar) {
    blindScalar(scalar, b);
    return b;
  };
  const G1Jac g1 = G1Jac::from(G1Affine{Fq::fromU64(1), Fq::fromU64(2)});
  const G1Affine g1s = g1.mul(k, 4).toAffine();
  const G1Affine g1sx = G1Jac::from(g1s).mul(blinded(delta), 5).toAffine();
  storeG1(out.g1s, g1s);
  storeG1(out.g1sx, g1sx);
  uint8_t g2spBytes[128];
  hashToG2(out.g1s, out.g1sx, g2spBytes);
  const G2Affine g2sp = loadG2(g2spBytes);
  if (g2sp.isInfinity() || !g2sp.onCurve()) throw InputError("hashToG2 returned a point off the twist");
  storeG2(out.g2spx, G2Jac::from(g2sp).mul(blinded(delta), 5).toAffine());
  const G1Affine d1 = G1Jac::from(loadG1(delta1)).mul(blinded(delta), 5).toAffine();
  const G2Affine d2 = G2Jac::from(loadG2(delta2)).mul(blinded(delta), 5).toAffine();
  storeG1(delta1, d1);
  storeG2(delta2, d2);
  storeG1(out.deltaAfter, d1);
  uint8_t* cPoints = zkey + (c.data - zkey);
  uint8_t* hPoints = zkey + (h.data - zkey);
  scaleSection(cPoints, (size_t)(c.size / 64), blinded(deltaInv), 5, threads);
  scaleSection(hPoints, domainSize, blinded(deltaInv), 5, threads);
  wipe(b, sizeof b);
  wipe(delta, sizeof delta);
  wipe(deltaInv, sizeof deltaInv);
  wipe(k, sizeof k);
  wipe(&d, sizeof d);
  wipe(&di, sizeof di);
}

}  // namespace MZK_KERNEL
}  // namespace mzk
