// A snarkjs Groth16 bn128 proving key (".zkey") as one kernel holds it: parsed and checked from the
// file, its points laid out as MSM tables (msm.hpp) within a memory plan, or mapped from the table
// cache (table_cache.hpp). Proving with it is prove.hpp's.
//
// Sections read (iden3 binary file, magic "zkey"): 1 protocol (1 = Groth16); 2 the Groth16 header
// (field moduli, nVars, nPublic, domain size, α₁ β₁ β₂ γ₂ δ₁ δ₂); 3 IC (only its size: verifiers
// read it); 4 the A and B coefficients; 5–9 the points of A, B1, B2, C and H.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "binfile.hpp"
#include "codec.hpp"
#include "curve.hpp"
#include "kernel.hpp"
#include "msm.hpp"
#include "ntt.hpp"

namespace mzk {
namespace MZK_KERNEL {

constexpr BinFormat ZKEY_FILE{"zkey", "a zkey file", 2, "zkey"};

struct Coef {
  uint32_t constraint, signal;
  Fr value;  // snarkjs stores v·R² mod r: times a plain witness value gives Montgomery(v·w)
};

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
    const BinFile file(data, length, ZKEY_FILE);
    {
      const BinSection& s = file.section(1, "header");
      if (s.size != 4) file.fail(": malformed section 1 (header)");
      const uint32_t protocol = le32(s.data);
      if (protocol != 1) throw InputError("zkey: not a Groth16 key (protocol " + std::to_string(protocol) + "; 1 is Groth16)");
    }
    {
      const BinSection& s = file.section(2, "Groth16 header");
      if (s.size < 4) file.fail(": truncated section 2 (Groth16 header)");
      const uint8_t* p = s.data;
      const uint32_t n8q = le32(p);
      if (n8q != 32 || s.size < 4 + 32 + 4 || !sameModulus<FqParams>(p + 4)) {
        throw InputError("zkey: not a bn128 key (its base field is not BN254's q); only bn128 is supported");
      }
      const uint32_t n8r = le32(p + 36);
      if (n8r != 32 || s.size < 72 || !sameModulus<FrParams>(p + 40)) {
        throw InputError("zkey: not a bn128 key (its scalar field is not BN254's r)");
      }
      file.section(2, 4 + 32 + 4 + 32 + 12 + 3 * 64 + 3 * 128, "Groth16 header");
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
    file.section(3, (uint64_t)(nPublic + 1) * 64, "IC");
    const BinSection& s4 = file.section(4, "coefficients");
    {
      if (s4.size < 4) file.fail(": truncated section 4 (coefficients)");
      const uint32_t n = le32(s4.data);
      file.section(4, 4 + (uint64_t)n * 44, "coefficients");
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
    if (options.releaseInput) releasePages(s4.data, s4.size);
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
    for (int m = 0; m < 5; m++) sectionData[m] = file.section(types[m], counts[m] * pointBytes[m], names[m]).data;
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

  /** The Groth16 prover (prove.hpp). */
  void prove(const uint8_t* wtns, size_t length, const ProveOptions& options, ProofOut& out) const override;
};

}  // namespace MZK_KERNEL
}  // namespace mzk
