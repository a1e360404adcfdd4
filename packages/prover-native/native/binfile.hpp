// Reading iden3 binary files (".zkey", ".wtns", ".r1cs", ".ptau"): a 4-byte magic, a u32 version,
// a u32 section count, then sections of (type u32, size u64, bytes), all little-endian. The one
// reader of that framing for every format: each section's size is checked against what is left of
// the file before anything reads it, so a truncated or lying file is refused by name, never read
// past its end. What a section holds is its reader's business (zkey.hpp, witness.hpp, r1cs.hpp,
// phase2_impl.hpp, zkey_points.hpp). Kernel-independent: bytes in, pointers into them out.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/**
 * A whole file mapped read-only for as long as this lives (empty files map to a null pointer of
 * length 0). Mapped rather than read: keys and circuits run to hundreds of MB, and pages already
 * parsed can be given back (releasePages) instead of staying resident beside what was made of them.
 */
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw FileError("cannot open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      const int e = errno;
      ::close(fd);
      throw FileError("cannot read " + path + ": " + std::strerror(e));
    }
    length_ = (size_t)st.st_size;
    if (length_ > 0) {
      void* p = mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, fd, 0);
      const int e = errno;
      ::close(fd);
      if (p == MAP_FAILED) throw FileError("cannot map " + path + ": " + std::strerror(e));
      madvise(p, length_, MADV_SEQUENTIAL);
      data_ = static_cast<const uint8_t*>(p);
    } else {
      ::close(fd);
    }
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), length_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t length() const { return length_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t length_ = 0;
};

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

/** What a reader expects of a file's framing, and how its messages name the file. */
struct BinFormat {
  const char* magic;
  /** "a zkey file", "an r1cs file": what the file is not when its magic is wrong. */
  const char* kind;
  /** Versions 1..maxVersion are read. */
  uint32_t maxVersion;
  /** The messages' subject: "zkey" gives "zkey: section 5 claims ...". */
  const char* name;
  /**
   * Phase 2's wording, which its callers and tests know ("the ptau is truncated: section 15 claims
   * ..."), where the prover's, the point check's and the r1cs reader's is "zkey: ...".
   */
  bool prose = false;
};

/** One section: where its bytes start in the file and how many there are. */
struct BinSection {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
};

class BinFile {
 public:
  /** Sections of higher types are skipped (no iden3 format has them), their sizes still checked. */
  static constexpr uint32_t MAX_TYPE = 31;

  /** Checks the magic, the version and every section's size against the file's length. */
  BinFile(const uint8_t* data, size_t length, const BinFormat& format) : format_(format) {
    const std::string magic = format.magic;
    if (length < 12) {
      fail(format.prose ? " is not " + std::string(format.kind) + " (no '" + magic + "' header)" : ": truncated (" + std::to_string(length) + " bytes, no header)");
    }
    if (std::memcmp(data, format.magic, 4) != 0) {
      fail(format.prose ? " is not " + std::string(format.kind) + " (no '" + magic + "' header)" : ": not " + std::string(format.kind) + " (bad magic bytes)");
    }
    const uint32_t version = le32(data + 4);
    if (version == 0 || version > format.maxVersion) {
      const std::string supported = format.maxVersion == 1 ? "1 is" : "1 to " + std::to_string(format.maxVersion) + " are";
      fail(format.prose ? ": version " + std::to_string(version) + " is not supported (" + supported + ")" : ": unsupported version " + std::to_string(version));
    }
    const uint32_t n = le32(data + 8);
    size_t pos = 12;
    for (uint32_t i = 0; i < n; i++) {
      if (length - pos < 12) {
        fail(format.prose ? " is truncated: it ends inside the header of section " + std::to_string(i + 1) + " of " + std::to_string(n)
                          : ": truncated in section header " + std::to_string(i));
      }
      const uint32_t type = le32(data + pos);
      const uint64_t size = le64(data + pos + 4);
      pos += 12;
      if (size > length - pos) {
        const std::string claim = "section " + std::to_string(type) + " claims " + std::to_string(size) + " bytes";
        fail(format.prose ? " is truncated: " + claim + ", the file has " + std::to_string(length - pos) + " left"
                          : ": " + claim + " but only " + std::to_string(length - pos) + " remain (truncated or corrupt)");
      }
      if (type <= MAX_TYPE) {
        Slot& s = slots_[type];
        // The first of duplicates is kept; section() refuses them anyway.
        if (s.count++ == 0) s.section = BinSection{data + pos, size};
      }
      pos += (size_t)size;
    }
  }

  /** Whether the file has a section of this type (once or more). */
  bool has(uint32_t type) const { return type <= MAX_TYPE && slots_[type].count > 0; }

  /** The one section of `type`, of any size; `name` says what it holds ("header", "A points"). */
  const BinSection& section(uint32_t type, const char* name) const {
    if (!has(type)) fail(format_.prose ? ": it has no section " + label(type, name) : ": missing section " + label(type, name));
    if (slots_[type].count > 1) fail(format_.prose ? ": section " + label(type, name) + " appears more than once" : ": section " + label(type, name) + " appears twice");
    return slots_[type].section;
  }
  /** The one section of `type`, of exactly `size` bytes. */
  const BinSection& section(uint32_t type, uint64_t size, const char* name) const {
    const BinSection& s = section(type, name);
    if (s.size != size) {
      fail(std::string(format_.prose ? "'s " : ": ") + "section " + label(type, name) + " has " + std::to_string(s.size) + " bytes, expected " + std::to_string(size));
    }
    return s;
  }
  /** Throws InputError: the file's name and then `problem`, which starts with ": " or " is ...". */
  [[noreturn]] void fail(const std::string& problem) const { throw InputError(format_.name + problem); }

 private:
  struct Slot {
    BinSection section;
    uint32_t count = 0;
  };
  BinFormat format_;
  Slot slots_[MAX_TYPE + 1];

  static std::string label(uint32_t type, const char* name) { return std::to_string(type) + " (" + name + ")"; }
};

}  // namespace mzk
