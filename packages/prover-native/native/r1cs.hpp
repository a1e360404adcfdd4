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

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernel.hpp"

namespace mzk {

/** A file could not be opened, mapped or written (reported as MZK_IO). */
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/** A whole file mapped read-only; empty files map to a null pointer of length 0. */
class MappedInput {
 public:
  explicit MappedInput(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw FileError("cannot open " + path + ": " + std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const int e = errno;
      ::close(fd);
      throw FileError("cannot stat " + path + ": " + std::strerror(e));
    }
    length_ = (size_t)st.st_size;
    if (length_ > 0) {
      void* p = mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        throw FileError("cannot map " + path + ": " + std::strerror(e));
      }
      madvise(p, length_, MADV_SEQUENTIAL);
      data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
  }
  ~MappedInput() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), length_);
  }
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;
  const uint8_t* data() const { return data_; }
  size_t length() const { return length_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t length_ = 0;
};

namespace r1cs_detail {
inline uint32_t rd32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t rd64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
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
        const uint32_t n = r1cs_detail::rd32(p);
        p += 4;
        for (uint32_t k = 0; k < n; k++, p += 36) fn(m, c, r1cs_detail::rd32(p), p + 4);
      }
    }
  }

 private:
  MappedInput file_;
  const uint8_t* constraints_ = nullptr;
  uint64_t constraintsSize_ = 0;

  [[noreturn]] static void refuse(const std::string& why) { throw InputError("r1cs: " + why); }

  void parse() {
    using namespace r1cs_detail;
    const uint8_t* d = file_.data();
    const size_t length = file_.length();
    if (length < 12) refuse("truncated (" + std::to_string(length) + " bytes, no header)");
    if (std::memcmp(d, "r1cs", 4) != 0) refuse("not an r1cs file (bad magic bytes)");
    if (rd32(d + 4) != 1) refuse("unsupported version " + std::to_string(rd32(d + 4)));
    const uint32_t nSections = rd32(d + 8);
    const uint8_t* header = nullptr;
    uint64_t headerSize = 0;
    size_t pos = 12;
    for (uint32_t i = 0; i < nSections; i++) {
      if (length - pos < 12) refuse("truncated in section header " + std::to_string(i));
      const uint32_t type = rd32(d + pos);
      const uint64_t size = rd64(d + pos + 4);
      pos += 12;
      if (size > length - pos) {
        refuse("section " + std::to_string(type) + " claims " + std::to_string(size) + " bytes but only " + std::to_string(length - pos) +
               " remain (truncated or corrupt)");
      }
      if (type == 1 || type == 2) {
        if ((type == 1 ? header : constraints_) != nullptr) refuse("section " + std::to_string(type) + " appears twice");
        (type == 1 ? header : constraints_) = d + pos;
        (type == 1 ? headerSize : constraintsSize_) = size;
      } else if (type == 4 || type == 5) {
        refuse("custom gates (section " + std::to_string(type) + ") are PLONK-only; Groth16 cannot use them");
      }
      pos += (size_t)size;
    }
    if (header == nullptr) refuse("missing section 1 (header)");
    if (constraints_ == nullptr) refuse("missing section 2 (constraints)");
    if (headerSize < 4) refuse("header (section 1) truncated");
    const uint32_t n8 = rd32(header);
    if (n8 != 32 || headerSize < 4 + 32 || !std::equal(header + 4, header + 36, reinterpret_cast<const uint8_t*>(BN254_R))) {
      refuse("the field is not BN254's scalar field (the circuit was compiled for another curve; compile with --prime bn128)");
    }
    if (headerSize != 4 + 32 + 4 * 4 + 8 + 4) refuse("header (section 1) has " + std::to_string(headerSize) + " bytes, expected 64");
    const uint8_t* h = header + 36;
    nWires = rd32(h);
    nPubOut = rd32(h + 4);
    nPubIn = rd32(h + 8);
    nPrvIn = rd32(h + 12);
    nLabels = rd64(h + 16);
    nConstraints = rd32(h + 24);
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
        const uint32_t n = rd32(p);
        p += 4;
        if ((uint64_t)(end - p) / 36 < n) refuse("constraints (section 2) truncated at constraint " + std::to_string(c));
        for (uint32_t k = 0; k < n; k++, p += 36) {
          const uint32_t wire = rd32(p);
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
