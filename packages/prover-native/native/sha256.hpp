// SHA-256 (FIPS 180-4), so that a key read from disk by the addon is checked against the digest it
// is stored under without passing through JavaScript. Not secret data: no constant-time concern.
// Where the CPU has the x86 SHA extensions (checked once at run time) blocks go through them, as
// node:crypto's do: the portable rounds hash about 6-8x slower, a second per 100 MB of a cold key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mzk {

namespace sha256detail {

inline const uint32_t* roundConstants() {
  static const uint32_t K[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  return K;
}

#if defined(__x86_64__)
inline bool cpuHasShaExtensions() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool sha = (b >> 29) & 1;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
  return sha && ssse3 && sse41;
}

/**
 * `count` 64-byte blocks through SHA256RNDS2 / MSG1 / MSG2. The instructions keep the state as the
 * lanes (A,B,E,F) and (C,D,G,H), two rounds per RNDS2, four message words per schedule step.
 */
__attribute__((target("sha,sse4.1,ssse3"))) inline void blocksSha(uint32_t state[8], const uint8_t* p, size_t count) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  const uint32_t* K = roundConstants();
  for (; count > 0; count--, p += 64) {
    const __m128i abefSaved = abef, cdghSaved = cdgh;
    __m128i w[4];
    for (int i = 0; i < 4; i++) w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), swap);
    for (int g = 0; g < 16; g++) {
      if (g >= 4) {
        // Words 4g..4g+3 from the four groups before them (w[g & 3] holds group g - 4).
        const __m128i older = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
        const __m128i mid = _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4);
        w[g & 3] = _mm_sha256msg2_epu32(_mm_add_epi32(older, mid), w[(g + 3) & 3]);
      }
      __m128i m = _mm_add_epi32(w[g & 3], _mm_loadu_si128(reinterpret_cast<const __m128i*>(K + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
      m = _mm_shuffle_epi32(m, 0x0E);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, m);
    }
    abef = _mm_add_epi32(abef, abefSaved);
    cdgh = _mm_add_epi32(cdgh, cdghSaved);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

}  // namespace sha256detail

class Sha256 {
 public:
  /** `portable`: the plain rounds even where the SHA extensions are there (tests of both). */
  explicit Sha256(bool portable = false) {
#if defined(__x86_64__)
    static const bool extensions = sha256detail::cpuHasShaExtensions();
    extensions_ = extensions && !portable;
#else
    (void)portable;
#endif
  }

  /** Whether this machine's blocks go through the SHA extensions. */
  bool accelerated() const { return extensions_; }

  void update(const uint8_t* p, size_t n) {
    total_ += n;
    if (fill_ > 0) {
      const size_t take = n < 64 - fill_ ? n : 64 - fill_;
      std::memcpy(buffer_ + fill_, p, take);
      fill_ += take;
      p += take;
      n -= take;
      if (fill_ < 64) return;
      blocks(buffer_, 1);
      fill_ = 0;
    }
    if (n >= 64) {
      blocks(p, n / 64);
      p += n / 64 * 64;
      n %= 64;
    }
    if (n > 0) std::memcpy(buffer_, p, n);
    fill_ = n;
  }

  std::array<uint8_t, 32> digest() {
    const uint64_t bits = total_ * 8;
    const uint8_t one = 0x80;
    update(&one, 1);
    const uint8_t zero[64] = {};
    update(zero, fill_ <= 56 ? 56 - fill_ : 120 - fill_);
    uint8_t length[8];
    for (int i = 0; i < 8; i++) length[i] = (uint8_t)(bits >> (56 - 8 * i));
    update(length, 8);
    std::array<uint8_t, 32> out;
    for (int i = 0; i < 8; i++)
      for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(state_[i] >> (24 - 8 * j));
    return out;
  }

  static std::string hex(const std::array<uint8_t, 32>& d) {
    static const char digits[] = "0123456789abcdef";
    std::string s(64, '0');
    for (int i = 0; i < 32; i++) {
      s[2 * i] = digits[d[i] >> 4];
      s[2 * i + 1] = digits[d[i] & 15];
    }
    return s;
  }

 private:
  static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void blocks(const uint8_t* p, size_t count) {
#if defined(__x86_64__)
    if (extensions_) return sha256detail::blocksSha(state_, p, count);
#endif
    for (; count > 0; count--, p += 64) block(p);
  }

  void block(const uint8_t* p) {
    const uint32_t* K = sha256detail::roundConstants();
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
    uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
    for (int i = 0; i < 64; i++) {
      const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    state_[5] += f;
    state_[6] += g;
    state_[7] += h;
  }

  uint32_t state_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buffer_[64] = {};
  size_t fill_ = 0;
  uint64_t total_ = 0;
  bool extensions_ = false;
};

}  // namespace mzk
