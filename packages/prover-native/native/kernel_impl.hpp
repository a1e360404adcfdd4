// One kernel: the zkey and witness parsers, the Groth16 prover and the test entry points, over the
// arithmetic in field.hpp / curve.hpp / msm.hpp / ntt.hpp. Included by kernel_generic.cpp and
// kernel_adx.cpp, each with its own MZK_KERNEL namespace and compiler flags.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "curve.hpp"
#include "kernel.hpp"
#include "msm.hpp"
#include "ntt.hpp"
#include "pairing.hpp"

namespace mzk {
namespace MZK_KERNEL {

// ---------------------------------------------------------------------------------------------
// Decimal output

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

// ---------------------------------------------------------------------------------------------
// Randomness: the OS CSPRNG, for r and s of every proof.

inline void osRandom(uint8_t* out, size_t n) {
  size_t got = 0;
#if defined(__linux__)
  while (got < n) {
    const ssize_t k = getrandom(out + got, n - got, 0);
    if (k > 0) {
      got += (size_t)k;
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    break;  // ENOSYS (very old kernels): fall back to /dev/urandom
  }
#endif
  if (got < n) {
    const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("no OS randomness: cannot open /dev/urandom");
    while (got < n) {
      const ssize_t k = ::read(fd, out + got, n - got);
      if (k > 0) {
        got += (size_t)k;
      } else if (k < 0 && errno == EINTR) {
        continue;
      } else {
        ::close(fd);
        throw std::runtime_error("no OS randomness: reading /dev/urandom failed");
      }
    }
    ::close(fd);
  }
}

/** A uniformly random element of Fr (rejection sampling on 254-bit values), as plain limbs. */
inline void randomScalar(u64* out) {
  for (;;) {
    uint8_t buf[32];
    osRandom(buf, sizeof buf);
    std::memcpy(out, buf, 32);
    out[3] &= (1ULL << 62) - 1;
    if (limbsBelowModulus<FrParams>(out)) return;
  }
}

/**
 * k + m·r for a fresh random 62-bit m, as five limbs: the same multiple of any point of order r,
 * but a different bit pattern on every use, so the time a (non-constant-time) scalar
 * multiplication takes says nothing about k (scalar blinding). Used for the secret r and s.
 */
inline void blindScalar(const u64* k, u64* out) {
  uint8_t buf[8];
  osRandom(buf, sizeof buf);
  u64 m;
  std::memcpy(&m, buf, 8);
  m &= (1ULL << 62) - 1;
  u64 carry = 0;
  for (int i = 0; i < 4; i++) {
    const u128 t = (u128)m * FrParams::P[i] + k[i] + carry;
    out[i] = (u64)t;
    carry = (u64)(t >> 64);
  }
  out[4] = carry;
}

// ---------------------------------------------------------------------------------------------
// iden3 binary files ("zkey", "wtns"): magic, version, sections of (type u32, size u64, bytes).

inline uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

struct BinFile {
  struct Section {
    const uint8_t* data = nullptr;
    uint64_t size = 0;
    int count = 0;
  };
  std::string what;
  Section sections[16];

  BinFile(const uint8_t* data, size_t length, const char* magic, uint32_t maxVersion, const std::string& name) : what(name) {
    if (length < 12) throw InputError(what + ": truncated (" + std::to_string(length) + " bytes, no header)");
    if (std::memcmp(data, magic, 4) != 0) throw InputError(what + ": not a " + magic + " file (bad magic bytes)");
    const uint32_t version = le32(data + 4);
    if (version == 0 || version > maxVersion) throw InputError(what + ": unsupported version " + std::to_string(version));
    const uint32_t n = le32(data + 8);
    size_t pos = 12;
    for (uint32_t i = 0; i < n; i++) {
      if (length - pos < 12) throw InputError(what + ": truncated in section header " + std::to_string(i));
      const uint32_t type = le32(data + pos);
      const uint64_t size = le64(data + pos + 4);
      pos += 12;
      if (size > length - pos) {
        throw InputError(what + ": section " + std::to_string(type) + " claims " + std::to_string(size) + " bytes but only " +
                         std::to_string(length - pos) + " remain (truncated or corrupt)");
      }
      if (type < 16) {
        Section& s = sections[type];
        s.data = data + pos;
        s.size = size;
        s.count++;
      }
      pos += (size_t)size;
    }
  }

  const Section& unique(uint32_t type, uint64_t expectedSize, const char* name) const {
    const Section& s = sections[type];
    if (s.count == 0) throw InputError(what + ": missing section " + std::to_string(type) + " (" + name + ")");
    if (s.count > 1) throw InputError(what + ": section " + std::to_string(type) + " (" + name + ") appears twice");
    if (s.size != expectedSize) {
      throw InputError(what + ": section " + std::to_string(type) + " (" + name + ") has " + std::to_string(s.size) +
                       " bytes, expected " + std::to_string(expectedSize));
    }
    return s;
  }
};

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

/**
 * Drops the parsed pages of a private read-only file mapping from the process's memory (they come
 * back from the page cache if read again), so a key's file does not stay resident beside the tables
 * made from it.
 */
inline void releasePages(const uint8_t* p, size_t n) {
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  const uintptr_t b = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
  if (e > b) madvise((void*)b, e - b, MADV_DONTNEED);
}

// ---------------------------------------------------------------------------------------------
// The proving key

struct Coef {
  uint32_t constraint, signal;
  Fr value;  // snarkjs stores v·R² mod r: times a plain witness value gives Montgomery(v·w)
};

struct Workspace {
  MsmWorkspace msm;
  std::vector<Fr> a, b, c;
  std::vector<u64> scalars, h;
};

// Phase timings: wall-clock milliseconds (MZK_PHASE_CPU_TIME: the calling thread's CPU time, for
// profiling single-threaded proofs on a noisy machine).
#ifdef MZK_PHASE_CPU_TIME
struct PhaseClock {
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  }
};
#else
struct PhaseClock {
  static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
};
#endif
inline double msSince(double t) { return PhaseClock::now() - t; }

class ZKey final : public ZKeyImpl {
 public:
  uint32_t nVars = 0, nPublic = 0, domainSize = 0;
  G1Affine alpha1, beta1, delta1;
  G2Affine beta2, gamma2, delta2;
  std::vector<Coef> coefs[2];  // matrices A and B, in file order
  MsmBases<G1> A, B1, C, H;
  MsmBases<G2> B2;
  Domain domain;
  FixedBase<G1> delta1Table;
  FixedBase<G2> delta2Table;
  MsmPlan plans_[5];
  size_t scratchBytes_ = 0;
  std::shared_ptr<const uint8_t> mapping_;
  std::string tableCache_ = "off";
  bool overBudget_ = false;

  ZKey(const uint8_t* data, size_t length, const LoadOptions& options) {
    const BinFile file(data, length, "zkey", 2, "zkey");
    {
      const auto& s = file.sections[1];
      if (s.count == 0) throw InputError("zkey: missing section 1 (header)");
      if (s.count > 1 || s.size != 4) throw InputError("zkey: malformed section 1 (header)");
      const uint32_t protocol = le32(s.data);
      if (protocol != 1) throw InputError("zkey: not a Groth16 key (protocol " + std::to_string(protocol) + "; 1 is Groth16)");
    }
    {
      const auto& s = file.sections[2];
      if (s.count != 1) throw InputError("zkey: missing or duplicated section 2 (Groth16 header)");
      if (s.size < 4) throw InputError("zkey: truncated section 2 (Groth16 header)");
      const uint8_t* p = s.data;
      const uint32_t n8q = le32(p);
      if (n8q != 32 || s.size < 4 + 32 + 4 || !sameModulus<FqParams>(p + 4)) {
        throw InputError("zkey: not a bn128 key (its base field is not BN254's q); only bn128 is supported");
      }
      const uint32_t n8r = le32(p + 36);
      if (n8r != 32 || s.size < 72 || !sameModulus<FrParams>(p + 40)) {
        throw InputError("zkey: not a bn128 key (its scalar field is not BN254's r)");
      }
      file.unique(2, 4 + 32 + 4 + 32 + 12 + 3 * 64 + 3 * 128, "Groth16 header");
      p += 72;
      nVars = le32(p);
      nPublic = le32(p + 4);
      domainSize = le32(p + 8);
      p += 12;
      if (nVars == 0 || (uint64_t)nPublic + 1 > nVars) {
        throw InputError("zkey: inconsistent header (nVars " + std::to_string(nVars) + ", nPublic " + std::to_string(nPublic) + ")");
      }
      if (domainSize == 0 || (domainSize & (domainSize - 1)) != 0 || domainSize > (1u << FR_TWO_ADICITY)) {
        throw InputError("zkey: domain size " + std::to_string(domainSize) + " is not a power of two up to 2^28");
      }
      const bool ok = readG1(p, alpha1) && readG1(p + 64, beta1) && readG2(p + 128, beta2) && readG2(p + 256, gamma2) &&
                      readG1(p + 384, delta1) && readG2(p + 448, delta2);
      if (!ok) throw InputError("zkey: a verification key point of the header is not on the curve (corrupt key)");
    }
    file.unique(3, (uint64_t)(nPublic + 1) * 64, "IC");
    {
      const auto& s4 = file.sections[4];
      if (s4.count != 1 || s4.size < 4) throw InputError("zkey: missing, duplicated or truncated section 4 (coefficients)");
      const uint32_t n = le32(s4.data);
      file.unique(4, 4 + (uint64_t)n * 44, "coefficients");
      // Reserved exactly, so the coefficients never hold a doubling vector's spare capacity.
      size_t inA = 0;
      for (uint32_t i = 0; i < n; i++) inA += le32(s4.data + 4 + (size_t)i * 44) == 0 ? 1 : 0;
      coefs[0].reserve(inA);
      coefs[1].reserve(n - inA);
      const uint8_t* p = s4.data + 4;
      for (uint32_t i = 0; i < n; i++, p += 44) {
        const uint32_t m = le32(p), c = le32(p + 4), sig = le32(p + 8);
        Coef coef{c, sig, Fr::zero()};
        if (m > 1 || c >= domainSize || sig >= nVars || !readMont<FrParams>(p + 12, coef.value)) {
          throw InputError("zkey: coefficient " + std::to_string(i) + " is out of range (corrupt key)");
        }
        coefs[m].push_back(coef);
      }
    }
    if (options.releaseInput) releasePages(file.sections[4].data, file.sections[4].size);
    int log = 0;
    while ((1u << log) < domainSize) log++;
    domain.init(log);
    delta1Table.build(delta1);
    delta2Table.build(delta2);

    // Every point section is checked (read straight into its table's first copy) before the
    // (slower) shifted copies are built or a cached table is trusted.
    const uint64_t counts[5] = {nVars, nVars, nVars, (uint64_t)nVars - nPublic - 1, domainSize};
    const uint32_t types[5] = {5, 6, 7, 8, 9};
    const char* names[5] = {"A points", "B1 points", "B2 points", "C points", "H points"};
    const size_t pointBytes[5] = {64, 64, 128, 64, 64};
    const uint8_t* sectionData[5];
    for (int m = 0; m < 5; m++) sectionData[m] = file.unique(types[m], counts[m] * pointBytes[m], names[m]).data;
    size_t present[5];
    for (int m = 0; m < 5; m++) {
      present[m] = 0;
      for (uint64_t i = 0; i < counts[m]; i++) {
        const uint8_t* q = sectionData[m] + i * pointBytes[m];
        bool zero = true;
        for (size_t b = 0; b < pointBytes[m] && zero; b++) zero = q[b] == 0;
        present[m] += zero ? 0 : 1;
      }
    }
    const MemoryPlan mp = memoryPlan(options, present);
    std::copy(mp.plans, mp.plans + 5, plans_);
    scratchBytes_ = mp.scratch;
    const std::string tag = planTag();
    size_t bodyBytes = 0;
    for (int m = 0; m < 5; m++) bodyBytes += counts[m] * (size_t)plans_[m].copies * pointBytes[m];

    std::shared_ptr<const uint8_t> body;
    if (options.tableStore) body = options.tableStore->map(tag, bodyBytes);
    if (body) {
      // A cache file is named by the key's digest and checked by its own; its first copies must
      // still be this key's points, byte for byte, or it is not used.
      size_t off = 0;
      bool same = true;
      for (int m = 0; m < 5 && same; m++) {
        const size_t K = (size_t)plans_[m].copies;
        for (uint64_t i = 0; i < counts[m] && same; i++)
          same = std::memcmp(body.get() + off + i * K * pointBytes[m], sectionData[m] + i * pointBytes[m], pointBytes[m]) == 0;
        off += counts[m] * K * pointBytes[m];
      }
      if (!same) {
        options.tableStore->discard(tag);
        body.reset();
      }
    }
    // The points are checked (on the curve, canonical) either way.
    const auto check = [&](int m, auto* into, auto& scratchPoint) {
      const size_t K = (size_t)plans_[m].copies;
      for (uint64_t i = 0; i < counts[m]; i++) {
        auto& dst = into != nullptr ? into[i * K] : scratchPoint;
        const bool ok = pointBytes[m] == 64 ? readG1(sectionData[m] + i * 64, reinterpret_cast<G1Affine&>(dst))
                                            : readG2(sectionData[m] + i * 128, reinterpret_cast<G2Affine&>(dst));
        if (!ok) {
          throw InputError("zkey: point " + std::to_string(i) + " of section " + std::to_string(types[m]) + " (" + names[m] +
                           ") is not on the curve or not canonical (corrupt key)");
        }
      }
      if (options.releaseInput) releasePages(sectionData[m], counts[m] * pointBytes[m]);
    };
    MsmBases<G1>* g1s[5] = {&A, &B1, nullptr, &C, &H};
    if (body) {
      size_t off = 0;
      G1Affine p1;
      G2Affine p2;
      for (int m = 0; m < 5; m++) {
        if (m == 2) {
          check(m, (G2Affine*)nullptr, p2);
          B2.mapTo(reinterpret_cast<const G2Affine*>(body.get() + off), counts[m], plans_[m]);
        } else {
          check(m, (G1Affine*)nullptr, p1);
          g1s[m]->mapTo(reinterpret_cast<const G1Affine*>(body.get() + off), counts[m], plans_[m]);
        }
        off += counts[m] * (size_t)plans_[m].copies * pointBytes[m];
      }
      mapping_ = body;
      tableCache_ = options.tableStore->status;
    } else {
      G1Affine p1;
      G2Affine p2;
      for (int m = 0; m < 5; m++) {
        if (m == 2) {
          B2.layout(counts[m], plans_[m]);
          check(m, B2.own.data(), p2);
        } else {
          g1s[m]->layout(counts[m], plans_[m]);
          check(m, g1s[m]->own.data(), p1);
        }
      }
      const int T = std::max(1, options.threads);
      for (int m = 0; m < 5; m++) m == 2 ? B2.finish(T) : g1s[m]->finish(T);
      if (options.tableStore) {
        options.tableStore->write(tag, {{A.own.data(), A.tableBytes()},
                                        {B1.own.data(), B1.tableBytes()},
                                        {B2.own.data(), B2.tableBytes()},
                                        {C.own.data(), C.tableBytes()},
                                        {H.own.data(), H.tableBytes()}});
        tableCache_ = options.tableStore->status;
      }
    }
  }

  /**
   * The memory formula (README, "Memory and sharing"), for a budget M and P proofs in flight:
   *   resident + Σ bases + Σ extra copies + P · scratch ≤ M,
   * resident = coefficients (40 B each) + twiddles (2 · 32 B per domain point) + δ tables (230 KB);
   * bases = one affine copy of every point of A, B1, B2, C, H (64 B, 128 B in G2) = the zkey's
   * point sections; an extra copy of an MSM's bases costs its bases' bytes again, plus 4 B per base
   * and proof of bucket entries; scratch = the NTT's three polynomials and H's scalars (4 · 32 B
   * per domain point), the witness (32 B per variable), the signed digits (4 B per base and window)
   * and the bucket entries (4 B per base and copy) of the largest MSM, bucket sums and per-thread
   * runs. Extra copies get what is left, shared in proportion to each MSM's bases; nothing left
   * means plain windowed Pippenger (one copy, no table beyond the bases).
   */
  struct MemoryPlan {
    MsmPlan plans[5];
    size_t resident = 0, tables = 0, scratch = 0;
    size_t total(int P) const { return resident + tables + (size_t)P * scratch; }
  };

  MemoryPlan memoryPlan(const LoadOptions& options, const size_t* present) {
    const size_t counts[5] = {nVars, nVars, nVars, (size_t)nVars - nPublic - 1, domainSize};
    const size_t pb[5] = {64, 64, 128, 64, 64};
    const int P = std::max(1, options.proofsInFlight);
    const int T = std::max(1, options.threads);
    size_t baseBytes = 0;
    for (int m = 0; m < 5; m++) baseBytes += counts[m] * pb[m];
    const auto planFor = [&](size_t extra) {
      MemoryPlan mp;
      mp.resident = residentBytes();
      size_t maxDigits = 0, maxEntries = 0, maxBuckets = 0;
      for (int m = 0; m < 5; m++) {
        const double share = (double)(counts[m] * pb[m]) / (double)baseBytes;
        // Legacy per-key table budget, shared in proportion to each MSM's bases.
        const size_t legacy = std::max<size_t>(1, (size_t)((double)options.tableBudget * share) / std::max<size_t>(1, counts[m] * pb[m]));
        const size_t perCopy = std::max<size_t>(1, counts[m] * (pb[m] + 4 * (size_t)P));
        const size_t byMemory = 1 + (size_t)((double)extra * share) / perCopy;
        // An MSM whose bases are all at infinity costs nothing: no copies of nothing.
        const int maxCopies = present[m] == 0 ? 1 : (int)std::min<size_t>(64, std::min(legacy, byMemory));
        mp.plans[m] = choosePlan(present[m], 1, (size_t)maxCopies * std::max<size_t>(1, present[m]), options.forceC,
                                 options.forceCopies != 0 ? options.forceCopies : 0);
        if (options.forceCopies == 0 && mp.plans[m].copies > maxCopies) mp.plans[m].copies = maxCopies;
        mp.tables += counts[m] * (size_t)mp.plans[m].copies * pb[m] + counts[m];
        maxDigits = std::max(maxDigits, counts[m] * (size_t)mp.plans[m].windows * 4);
        maxEntries = std::max(maxEntries, counts[m] * (size_t)mp.plans[m].copies * 4);
        maxBuckets = std::max(maxBuckets, ((size_t)1 << (mp.plans[m].c - 1)) * (pb[m] + 4 * (size_t)T));
      }
      mp.scratch = (size_t)domainSize * 4 * 32 + (size_t)nVars * 32 + maxDigits + maxEntries + maxBuckets + (size_t)T * (512 << 10);
      return mp;
    };
    const MemoryPlan least = planFor(0);
    if (options.memoryBudget == 0) return planFor((size_t)1 << 62);
    if (least.total(P) > options.memoryBudget && !options.refuseOverBudget) {
      overBudget_ = true;
      return least;
    }
    if (least.total(P) > options.memoryBudget) {
      throw OutOfBudget("zkey: needs at least " + std::to_string((least.total(P) + (1 << 20) - 1) >> 20) + " MiB to prove " +
                        std::to_string(P) + " proof(s) at once (resident " + std::to_string(least.resident >> 20) + " MiB, bases " +
                        std::to_string(least.tables >> 20) + " MiB, scratch " + std::to_string(least.scratch >> 20) +
                        " MiB per proof); the memory budget is " + std::to_string(options.memoryBudget >> 20) + " MiB");
    }
    // Extra copies get what the least plan leaves; a plan whose scratch grew past the budget
    // (more copies, more bucket entries) gives back the excess until it fits.
    size_t extra = options.memoryBudget - least.total(P);
    for (int tries = 0; tries < 16 && extra > 0; tries++) {
      const MemoryPlan mp = planFor(extra);
      if (mp.total(P) <= options.memoryBudget) return mp;
      const size_t over = mp.total(P) - options.memoryBudget;
      extra = extra > 2 * over ? extra - 2 * over : extra / 2;
    }
    return least;
  }

  size_t residentBytes() const {
    return (coefs[0].size() + coefs[1].size()) * sizeof(Coef) + (size_t)domainSize * 2 * sizeof(Fr) +
           (delta1Table.table.size() * sizeof(G1Affine) + delta2Table.table.size() * sizeof(G2Affine));
  }

  std::string planTag() const {
    std::string t;
    const char* names[5] = {"A", "B1", "B2", "C", "H"};
    for (int m = 0; m < 5; m++)
      t += std::string(m ? "." : "") + names[m] + "c" + std::to_string(plans_[m].c) + "k" + std::to_string(plans_[m].copies) + "r" +
           std::to_string(plans_[m].rounds);
    return t;
  }

  ZKeyInfo info() const override {
    ZKeyInfo i;
    i.nVars = nVars;
    i.nPublic = nPublic;
    i.domainSize = domainSize;
    i.tableBytes = A.bytes() + B1.bytes() + B2.bytes() + C.bytes() + H.bytes();
    for (size_t b : {A.mapped() ? A.tableBytes() : 0, B1.mapped() ? B1.tableBytes() : 0, B2.mapped() ? B2.tableBytes() : 0,
                     C.mapped() ? C.tableBytes() : 0, H.mapped() ? H.tableBytes() : 0})
      i.tableBytesMapped += b;
    i.residentBytes = residentBytes();
    i.scratchBytes = scratchBytes_;
    i.tableCache = tableCache_;
    i.overBudget = overBudget_;
    const MsmPlan* plans[5] = {&A.plan, &B1.plan, &B2.plan, &C.plan, &H.plan};
    for (int k = 0; k < 5; k++) i.plans[k] = ZKeyInfo::Plan{plans[k]->c, plans[k]->copies, plans[k]->rounds};
    return i;
  }

  void prove(const uint8_t* wtns, size_t length, const ProveOptions& options, ProofOut& out) const override {
    thread_local Workspace ws;
    const int T = std::max(1, options.threads);
    const Cancel& cancel = options.cancel;
    double t0 = PhaseClock::now();

    // The witness: checked against this key before anything is computed.
    const BinFile file(wtns, length, "wtns", 2, "witness");
    {
      const auto& s = file.sections[1];
      if (s.count != 1 || s.size < 4) throw InputError("witness: missing, duplicated or truncated section 1 (header)");
      const uint32_t n8 = le32(s.data);
      if (n8 != 32 || s.size < 36 || !sameModulus<FrParams>(s.data + 4)) {
        throw InputError("witness: its field is not BN254's scalar field (a witness for another curve)");
      }
      file.unique(1, 40, "header");
      const uint32_t n = le32(s.data + 36);
      if (n != nVars) {
        throw InputError("witness: " + std::to_string(n) + " values for a circuit of " + std::to_string(nVars) +
                         " (a witness for another circuit)");
      }
    }
    const auto& values = file.unique(2, (uint64_t)nVars * 32, "values");
    ws.scalars.resize((size_t)nVars * 4);
    u64* w = ws.scalars.data();
    std::memcpy(w, values.data, (size_t)nVars * 32);
    for (uint32_t i = 0; i < nVars; i++) {
      if (!limbsBelowModulus<FrParams>(w + 4 * i)) throw InputError("witness: value " + std::to_string(i) + " is not below the field prime");
    }
    if (w[0] != 1 || w[1] != 0 || w[2] != 0 || w[3] != 0) throw InputError("witness: value 0 must be 1 (a witness for another circuit?)");
    out.phaseMs[0] = msSince(t0);

    // A, B (and C = A∘B) evaluated on the domain, in Montgomery form.
    t0 = PhaseClock::now();
    const size_t n = domainSize;
    ws.a.assign(n, Fr::zero());
    ws.b.assign(n, Fr::zero());
    ws.c.resize(n);
    for (int m = 0; m < 2; m++) {
      Fr* dst = m == 0 ? ws.a.data() : ws.b.data();
      for (const Coef& k : coefs[m]) dst[k.constraint] += k.value * Fr::raw(w + 4 * (size_t)k.signal);
    }
    for (size_t i = 0; i < n; i++) ws.c[i] = ws.a[i] * ws.b[i];
    out.phaseMs[1] = msSince(t0);
    checkCancel(cancel);

    // On the odd coset: h = A·B - C, out of Montgomery form, as the H MSM's scalars.
    t0 = PhaseClock::now();
    {
      Fr* polys[3] = {ws.a.data(), ws.b.data(), ws.c.data()};
      const int TN = std::min(T, 3);
      forkJoin(TN, [&](int t) {
        for (int k = t; k < 3; k += TN) domain.toCoset(polys[k]);
      });
      ws.h.resize(n * 4);
      for (size_t i = 0; i < n; i++) (ws.a[i] * ws.b[i] - ws.c[i]).toPlain(ws.h.data() + 4 * i);
    }
    out.phaseMs[2] = msSince(t0);
    checkCancel(cancel);

    t0 = PhaseClock::now();
    G1Jac pa = msm<G1>(A, w, nVars, T, ws.msm, cancel);
    out.phaseMs[3] = msSince(t0);
    t0 = PhaseClock::now();
    G1Jac pb1 = msm<G1>(B1, w, nVars, T, ws.msm, cancel);
    out.phaseMs[4] = msSince(t0);
    t0 = PhaseClock::now();
    G2Jac pb = msm<G2>(B2, w, nVars, T, ws.msm, cancel);
    out.phaseMs[5] = msSince(t0);
    t0 = PhaseClock::now();
    G1Jac pc = msm<G1>(C, w + 4 * ((size_t)nPublic + 1), (size_t)nVars - nPublic - 1, T, ws.msm, cancel);
    out.phaseMs[6] = msSince(t0);
    t0 = PhaseClock::now();
    const G1Jac ph = msm<G1>(H, ws.h.data(), n, T, ws.msm, cancel);
    out.phaseMs[7] = msSince(t0);

    // Blinding with fresh r, s (zero knowledge), as snarkjs:
    //   A = Σ + α + rδ,  B = Σ + β + sδ (G2, and its G1 twin for C),  C = Σ + H + sA + rB₁ - rsδ.
    t0 = PhaseClock::now();
    u64 r[4], s[4], rs[4], rb[5], sb[5], rsb[5];
    randomScalar(r);
    randomScalar(s);
    (-(Fr::fromPlain(r) * Fr::fromPlain(s))).toPlain(rs);
    blindScalar(r, rb);
    blindScalar(s, sb);
    blindScalar(rs, rsb);
    pa = pa.addAffine(alpha1).add(delta1Table.mul(rb, 5));
    blindScalar(s, sb);
    pb = pb.addAffine(beta2).add(delta2Table.mul(sb, 5));
    blindScalar(s, sb);
    pb1 = pb1.addAffine(beta1).add(delta1Table.mul(sb, 5));
    blindScalar(s, sb);
    blindScalar(r, rb);
    pc = pc.add(ph).add(pa.mulPlus(sb, pb1, rb, 5)).add(delta1Table.mul(rsb, 5));
    for (u64* secret : {r, s, rs, rb, sb, rsb}) std::memset(secret, 0, sizeof(u64) * 4);
    std::memset(rb + 4, 0, 8);
    std::memset(sb + 4, 0, 8);
    std::memset(rsb + 4, 0, 8);

    const auto g1Object = [](const G1Jac& p) {
      if (p.isInfinity()) return std::vector<std::string>{"0", "1", "0"};
      const G1Affine a = p.toAffine();
      return std::vector<std::string>{decimalOf(a.x), decimalOf(a.y), "1"};
    };
    out.piA = g1Object(pa);
    out.piC = g1Object(pc);
    if (pb.isInfinity()) {
      out.piB = {{"0", "0"}, {"1", "0"}, {"0", "0"}};
    } else {
      const G2Affine b = pb.toAffine();
      out.piB = {{decimalOf(b.x.c0), decimalOf(b.x.c1)}, {decimalOf(b.y.c0), decimalOf(b.y.c1)}, {"1", "0"}};
    }
    out.publicSignals.clear();
    for (uint32_t i = 1; i <= nPublic; i++) out.publicSignals.push_back(toDecimal(w + 4 * (size_t)i));
    out.phaseMs[8] = msSince(t0);
  }
};

inline std::shared_ptr<ZKeyImpl> load(const uint8_t* data, size_t length, const LoadOptions& options) {
  return std::make_shared<ZKey>(data, length, options);
}

// ---------------------------------------------------------------------------------------------
// Test entry points: plain (non-Montgomery) little-endian integers in and out, so a BigInt
// reference can check every operation.

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
