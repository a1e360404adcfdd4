// A circom `.r1cs` file, mapped read-only (a 2^20-constraint file is hundreds of MB: it is never
// copied, and pages the setup has passed over can be dropped by the OS). Kernel-independent: it
// hands out the raw little-endian coefficient bytes, checked canonical; the setup turns them into
// field elements. Reused by the native phase 2 (an operator's ptau) as well as the development setup.
//
// Format (iden3 binary file, magic "r1cs", version 1): sections of (type u32, size u64, bytes);
//   1 header: n8 u32, prime (n8 bytes LE), nWires u32, nPubOut u32, nPubIn u32, nPrvIn u32,
//             nLabels u64, nConstraints u32
//   2 constraints: per constraint the linear combinations A, B, C, each nTerms u32 then
//             nTerms × (wire u32, coefficient n8 bytes LE, plain, < prime)
//   3 wire → label map (not needed here); 4, 5 custom gates (PLONK only: refused)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "binfile.hpp"
#include "kernel.hpp"

namespace mzk {

namespace r1cs_detail {
/** BN254's scalar field r, little-endian bytes' limbs. */
constexpr uint64_t BN254_R[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};
inline bool belowR(const uint8_t* p) {
  uint64_t l[4];
  std::memcpy(l, p, 32);
  for (int i = 3; i >= 0; i--) {
    if (l[i] < BN254_R[i]) return true;
    if (l[i] > BN254_R[i]) return false;
  }
  return false;
}
}  // namespace r1cs_detail

constexpr BinFormat R1CS_FILE{"r1cs", "an r1cs file", 1, "r1cs"};

/**
 * A parsed, fully checked r1cs over BN254's scalar field. Construction walks the constraint section
 * once (sizes, wire indices, canonical coefficients), so every later walk can trust it.
 */
class R1cs {
 public:
  uint32_t nWires = 0, nPubOut = 0, nPubIn = 0, nPrvIn = 0, nConstraints = 0;
  uint64_t nLabels = 0;
  /** Public signals as snarkjs counts them (outputs, then public inputs), not counting the constant 1. */
  uint32_t nPublic() const { return nPubOut + nPubIn; }
  /** Non-zero entries of A and of B (the zkey's coefficient section holds these, plus nPublic + 1). */
  uint64_t termsA = 0, termsB = 0, termsC = 0;

  explicit R1cs(const std::string& path) : file_(path) { parse(); }

  /**
   * Calls fn(matrix, constraint, wire, coefficient bytes) for every term, matrix 0 = A, 1 = B,
   * 2 = C, in file order. The coefficient is 32 bytes LE, plain, canonical.
   */
  template <class Fn>
  void forEachTerm(Fn&& fn) const {
    const uint8_t* p = constraints_;
    for (uint32_t c = 0; c < nConstraints; c++) {
      for (int m = 0; m < 3; m++) {
        const uint32_t n = le32(p);
        p += 4;
        for (uint32_t k = 0; k < n; k++, p += 36) fn(m, c, le32(p), p + 4);
      }
    }
  }

 private:
  MappedFile file_;
  const uint8_t* constraints_ = nullptr;
  uint64_t constraintsSize_ = 0;

  [[noreturn]] static void refuse(const std::string& why) { throw InputError("r1cs: " + why); }

  void parse() {
    using namespace r1cs_detail;
    const BinFile file(file_.data(), file_.length(), R1CS_FILE);
    for (uint32_t type : {4u, 5u})
      if (file.has(type)) refuse("custom gates (section " + std::to_string(type) + ") are PLONK-only; Groth16 cannot use them");
    const BinSection& headerSection = file.section(1, "header");
    const BinSection& constraintsSection = file.section(2, "constraints");
    const uint8_t* header = headerSection.data;
    const uint64_t headerSize = headerSection.size;
    constraints_ = constraintsSection.data;
    constraintsSize_ = constraintsSection.size;
    if (headerSize < 4) refuse("header (section 1) truncated");
    const uint32_t n8 = le32(header);
    if (n8 != 32 || headerSize < 4 + 32 || !std::equal(header + 4, header + 36, reinterpret_cast<const uint8_t*>(BN254_R))) {
      refuse("the field is not BN254's scalar field (the circuit was compiled for another curve; compile with --prime bn128)");
    }
    if (headerSize != 4 + 32 + 4 * 4 + 8 + 4) refuse("header (section 1) has " + std::to_string(headerSize) + " bytes, expected 64");
    const uint8_t* h = header + 36;
    nWires = le32(h);
    nPubOut = le32(h + 4);
    nPubIn = le32(h + 8);
    nPrvIn = le32(h + 12);
    nLabels = le64(h + 16);
    nConstraints = le32(h + 24);
    if (nWires == 0) refuse("no wires (the constant 1 is wire 0)");
    // Public signals are wires 1..nPublic; private inputs need not be wires at all (circom --O2 drops
    // those no constraint uses), so only the public ones are bounded by the wire count.
    if ((uint64_t)nPubOut + nPubIn + 1 > nWires) refuse("header counts more public signals than wires");
    // Walk once: every term in bounds, every wire known, every coefficient canonical.
    const uint8_t* p = constraints_;
    const uint8_t* end = constraints_ + constraintsSize_;
    uint64_t* counts[3] = {&termsA, &termsB, &termsC};
    for (uint32_t c = 0; c < nConstraints; c++) {
      for (int m = 0; m < 3; m++) {
        if (end - p < 4) refuse("constraints (section 2) truncated at constraint " + std::to_string(c));
        const uint32_t n = le32(p);
        p += 4;
        if ((uint64_t)(end - p) / 36 < n) refuse("constraints (section 2) truncated at constraint " + std::to_string(c));
        for (uint32_t k = 0; k < n; k++, p += 36) {
          const uint32_t wire = le32(p);
          if (wire >= nWires) refuse("constraint " + std::to_string(c) + " names wire " + std::to_string(wire) + " of " + std::to_string(nWires));
          if (!belowR(p + 4)) refuse("constraint " + std::to_string(c) + " has a coefficient not below the field's modulus");
        }
        *counts[m] += n;
      }
    }
    if (p != end) refuse("constraints (section 2) has " + std::to_string(end - p) + " bytes after the last constraint");
  }
};

}  // namespace mzk
