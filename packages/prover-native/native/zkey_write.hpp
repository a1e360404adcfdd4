// Writing iden3 binary files (".zkey", ".ptau"): magic, version, section count, then sections of
// (type u32, size u64, bytes). A section's size is patched in when it ends, so sections stream out
// of the setup chunk by chunk and no whole section needs to sit in memory. Kernel-independent (bytes
// in, bytes out); the snarkjs layouts of the sections are spelled out where they are written:
// writeZkeyHeader / writeZkeyGroth16Header below, the point sections in setup_dev.hpp.
// Reused by the native phase 2 (an operator's ptau).
#pragma once

#include <errno.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "binfile.hpp"
#include "r1cs.hpp"

namespace mzk {

/**
 * Writes `path` through `path.partial`, renamed into place by close(): a reader never sees half a
 * file, and a writer destroyed before close() (a failure) removes its partial file.
 */
class BinWriter {
 public:
  BinWriter(const std::string& path, const char magic[4], uint32_t version, uint32_t nSections) : path_(path), partial_(path + ".partial") {
    f_ = std::fopen(partial_.c_str(), "wb");
    if (f_ == nullptr) throw FileError("cannot create " + partial_ + ": " + std::strerror(errno));
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    write(magic, 4);
    u32(version);
    u32(nSections);
  }
  ~BinWriter() {
    if (f_ != nullptr) {
      std::fclose(f_);
      std::remove(partial_.c_str());
    }
  }
  BinWriter(const BinWriter&) = delete;
  BinWriter& operator=(const BinWriter&) = delete;

  void write(const void* p, size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, f_) != n) fail("write");
  }
  void u32(uint32_t v) { write(&v, 4); }
  void u64(uint64_t v) { write(&v, 8); }

  void startSection(uint32_t type) {
    if (open_) throw std::logic_error("BinWriter: section " + std::to_string(type) + " started inside another");
    u32(type);
    sizeAt_ = std::ftell(f_);
    if (sizeAt_ < 0) fail("seek");
    u64(0);
    open_ = true;
  }
  void endSection() {
    const long end = std::ftell(f_);
    if (end < 0) fail("seek");
    const uint64_t size = (uint64_t)(end - sizeAt_ - 8);
    if (std::fseek(f_, sizeAt_, SEEK_SET) != 0) fail("seek");
    u64(size);
    if (std::fseek(f_, end, SEEK_SET) != 0) fail("seek");
    open_ = false;
  }
  /** Flushes, closes and renames into place; a failure here (a full disk) is an error, not a silently short file. */
  void close() {
    if (std::fflush(f_) != 0) fail("flush");
    const int r = std::fclose(f_);
    f_ = nullptr;
    if (r != 0 || std::rename(partial_.c_str(), path_.c_str()) != 0) {
      const int e = errno;
      std::remove(partial_.c_str());
      throw FileError("cannot write " + path_ + ": " + std::strerror(e));
    }
  }

 private:
  [[noreturn]] void fail(const char* what) { throw FileError(std::string("cannot ") + what + " " + partial_ + ": " + std::strerror(errno)); }
  std::FILE* f_ = nullptr;
  std::string path_, partial_;
  long sizeAt_ = 0;
  bool open_ = false;
};

/** BN254's base field q and scalar field r as 32 little-endian bytes. */
constexpr uint64_t BN254_Q_LIMBS[4] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};

/** snarkjs zkey section 1: the protocol, 1 = Groth16. */
inline void writeZkeyProtocol(BinWriter& w) {
  w.startSection(1);
  w.u32(1);
  w.endSection();
}

/**
 * snarkjs zkey section 2 (Groth16 header): n8q, q, n8r, r, nVars, nPublic, domainSize, then α₁, β₁,
 * β₂, γ₂, δ₁, δ₂ as points in snarkjs's "LEM" form (affine, Montgomery limbs little-endian, G2
 * coordinates c0 then c1): `points` holds those 6 points' 64 + 64 + 128 + 128 + 64 + 128 bytes.
 */
inline void writeZkeyGroth16Header(BinWriter& w, uint32_t nVars, uint32_t nPublic, uint32_t domainSize, const uint8_t points[576]) {
  w.startSection(2);
  w.u32(32);
  w.write(BN254_Q_LIMBS, 32);
  w.u32(32);
  w.write(r1cs_detail::BN254_R, 32);
  w.u32(nVars);
  w.u32(nPublic);
  w.u32(domainSize);
  w.write(points, 576);
  w.endSection();
}

}  // namespace mzk
