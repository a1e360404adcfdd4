// Randomness for one kernel: the OS CSPRNG, for r and s of every proof, phase 2's δ and the
// development setup's toxic waste, and the blinding that keeps a secret scalar out of the timing of
// a (non-constant-time) scalar multiplication.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#include <cstring>
#include <stdexcept>

#include "field.hpp"

namespace mzk {
namespace MZK_KERNEL {

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

}  // namespace MZK_KERNEL
}  // namespace mzk
