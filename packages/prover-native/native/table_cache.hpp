// The disk cache of a key's MSM tables, so a process that loads a key another process (or this one,
// before a restart) already built maps the tables read-only instead of spending the doublings
// again: the page cache then holds one copy for every process on the host.
//
// One file per (zkey SHA-256, kernel, table layout version, plan), named from all four, so a file
// made for another key, kernel, layout or memory plan is never even opened. It is a 4 KiB header
// (magic, layout version, body size, the names above, the SHA-256 of the body) and the body: the
// tables of A, B1, B2, C, H one after the other, exactly as the kernel holds them. A file is written
// under a temporary name and renamed, so a reader sees a whole file or none; a file whose size,
// header or body digest does not match is deleted and never used (the key is then built and the
// file written again). Hashing the body on every map costs ~0.7 s per GB with the SHA extensions:
// far less than building (tens of seconds per GB), and it is what makes a torn or flipped file
// harmless. The directory is bounded: after every write the least recently used files (a map
// touches its file's mtime) are deleted until the files fit `maxBytes`; a deleted file another
// process still maps stays valid for it (Linux keeps the inode until the last unmap).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernel.hpp"
#include "sha256.hpp"

namespace mzk {

class TableCache final : public TableStore {
 public:
  /** Bumped whenever the kernel's in-memory table layout changes (Affine<C>, MsmBases order). */
  static constexpr uint32_t LAYOUT = 1;
  static constexpr size_t HEADER = 4096;

  TableCache(std::string dir, std::string digest, std::string kernel, uint64_t maxBytes)
      : dir_(std::move(dir)), digest_(std::move(digest)), kernel_(std::move(kernel)), maxBytes_(maxBytes) {}

  std::string pathFor(const std::string& plan) const {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char ch : plan) h = (h ^ ch) * 0x100000001b3ULL;
    char tag[17];
    std::snprintf(tag, sizeof tag, "%016llx", (unsigned long long)h);
    return dir_ + "/" + digest_ + "-" + kernel_ + "-L" + std::to_string(LAYOUT) + "-" + tag + ".tables";
  }

  std::shared_ptr<const uint8_t> map(const std::string& plan, size_t bytes) override {
    const std::string path = pathFor(plan);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      status = "built";
      return nullptr;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != HEADER + (uint64_t)bytes) {
      ::close(fd);
      return reject(path);
    }
    void* p = mmap(nullptr, HEADER + bytes, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return reject(path);
    const uint8_t* base = static_cast<const uint8_t*>(p);
    uint8_t expected[HEADER];
    header(plan, bytes, nullptr, expected);
    Sha256 hash;
    hash.update(base + HEADER, bytes);
    const std::array<uint8_t, 32> digest = hash.digest();
    if (std::memcmp(base, expected, BODY_DIGEST) != 0 || std::memcmp(base + BODY_DIGEST, digest.data(), 32) != 0) {
      munmap(p, HEADER + bytes);
      return reject(path);
    }
    utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recency, for eviction
    status = "mapped";
    const size_t length = HEADER + bytes;
    return std::shared_ptr<const uint8_t>(base + HEADER, [p, length](const uint8_t*) { munmap(p, length); });
  }

  void write(const std::string& plan, const std::vector<std::pair<const void*, size_t>>& parts) override {
    const bool rebuilt = status == "rebuilt";
    status = "unwritable";
    if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) return;
    size_t bytes = 0;
    Sha256 hash;
    for (const auto& part : parts) {
      hash.update(static_cast<const uint8_t*>(part.first), part.second);
      bytes += part.second;
    }
    const std::array<uint8_t, 32> digest = hash.digest();
    uint8_t head[HEADER];
    header(plan, bytes, digest.data(), head);
    static std::atomic<uint64_t> counter{0};
    const std::string tmp = dir_ + "/.tmp-" + digest_.substr(0, 16) + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return;
    bool ok = writeAll(fd, head, HEADER);
    for (const auto& part : parts) ok = ok && writeAll(fd, static_cast<const uint8_t*>(part.first), part.second);
    ok = ::close(fd) == 0 && ok;
    const std::string path = pathFor(plan);
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
      unlink(tmp.c_str());
      return;
    }
    status = rebuilt ? "rebuilt" : "written";
    evict(path);
  }

  void discard(const std::string& plan) override {
    unlink(pathFor(plan).c_str());
    status = "rebuilt";
  }

 private:
  // Header: magic (8), layout (4), header size (4), body size (8), digest (64), kernel (32),
  // plan (256), then the body's SHA-256 at BODY_DIGEST; the rest zero.
  static constexpr size_t BODY_DIGEST = 8 + 4 + 4 + 8 + 64 + 32 + 256;

  void header(const std::string& plan, size_t bytes, const uint8_t* bodyDigest, uint8_t* out) const {
    std::memset(out, 0, HEADER);
    std::memcpy(out, "MZKTABLE", 8);
    const uint32_t layout = LAYOUT, headerSize = HEADER;
    const uint64_t body = bytes;
    std::memcpy(out + 8, &layout, 4);
    std::memcpy(out + 12, &headerSize, 4);
    std::memcpy(out + 16, &body, 8);
    std::memcpy(out + 24, digest_.data(), std::min<size_t>(64, digest_.size()));
    std::memcpy(out + 88, kernel_.data(), std::min<size_t>(32, kernel_.size()));
    std::memcpy(out + 120, plan.data(), std::min<size_t>(256, plan.size()));
    if (bodyDigest != nullptr) std::memcpy(out + BODY_DIGEST, bodyDigest, 32);
  }

  std::shared_ptr<const uint8_t> reject(const std::string& path) {
    unlink(path.c_str());
    status = "rebuilt";
    return nullptr;
  }

  static bool writeAll(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
      const ssize_t k = ::write(fd, p, std::min<size_t>(n, (size_t)1 << 30));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      p += k;
      n -= (size_t)k;
    }
    return true;
  }

  /** Least recently used table files go until the rest fit maxBytes; `keep` (just written) stays. */
  void evict(const std::string& keep) const {
    DIR* d = opendir(dir_.c_str());
    if (d == nullptr) return;
    struct Entry {
      std::string path;
      uint64_t size;
      timespec mtime;
    };
    std::vector<Entry> files;
    uint64_t total = 0;
    const time_t now = time(nullptr);
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      const std::string path = dir_ + "/" + name;
      struct stat st {};
      if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      // A writer that died leaves its temporary file: gone after an hour.
      if (name.rfind(".tmp-", 0) == 0) {
        if (now - st.st_mtime > 3600) unlink(path.c_str());
        continue;
      }
      if (name.size() < 7 || name.compare(name.size() - 7, 7, ".tables") != 0) continue;
      files.push_back(Entry{path, (uint64_t)st.st_size, st.st_mtim});
      total += (uint64_t)st.st_size;
    }
    closedir(d);
    std::sort(files.begin(), files.end(), [](const Entry& a, const Entry& b) {
      return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    for (const Entry& f : files) {
      if (total <= maxBytes_) break;
      if (f.path == keep) continue;
      if (unlink(f.path.c_str()) == 0) total -= f.size;
    }
  }

  std::string dir_, digest_, kernel_;
  uint64_t maxBytes_;
};

}  // namespace mzk
