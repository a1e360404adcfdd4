// BLAKE2b-512 (RFC 7693), unkeyed: snarkjs names a zkey's circuit ("csHash") and chains the phase-2
// contributions with it, so a key that `snarkjs zkey verify` accepts needs the same digests.
// Checked against node:crypto's blake2b512 in test/setup.test.ts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mzk {

class Blake2b {
 public:
  Blake2b() {
    for (int i = 0; i < 8; i++) h_[i] = IV[i];
    h_[0] ^= 0x01010000ULL ^ 64;  // digest length 64, no key, fanout 1, depth 1
  }

  void update(const uint8_t* in, size_t n) {
    while (n > 0) {
      if (fill_ == 128) {  // a full block is compressed only once more input follows: the last one is final
        counter_ += 128;
        compress(false);
        fill_ = 0;
      }
      const size_t k = n < 128 - fill_ ? n : 128 - fill_;
      std::memcpy(buf_ + fill_, in, k);
      fill_ += k;
      in += k;
      n -= k;
    }
  }

  void digest(uint8_t out[64]) {
    counter_ += fill_;
    std::memset(buf_ + fill_, 0, 128 - fill_);
    compress(true);
    std::memcpy(out, h_, 64);  // little-endian words (x86-64 and every target this builds for)
  }

 private:
  static constexpr uint64_t IV[8] = {0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
                                     0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  static constexpr uint8_t SIGMA[12][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

  static uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

  void compress(bool last) {
    uint64_t m[16], v[16];
    std::memcpy(m, buf_, 128);
    for (int i = 0; i < 8; i++) {
      v[i] = h_[i];
      v[i + 8] = IV[i];
    }
    v[12] ^= counter_;  // inputs here stay below 2^64 bytes: the counter's high word is 0
    if (last) v[14] = ~v[14];
    auto g = [&](int a, int b, int c, int d, uint64_t x, uint64_t y) {
      v[a] = v[a] + v[b] + x;
      v[d] = rotr(v[d] ^ v[a], 32);
      v[c] = v[c] + v[d];
      v[b] = rotr(v[b] ^ v[c], 24);
      v[a] = v[a] + v[b] + y;
      v[d] = rotr(v[d] ^ v[a], 16);
      v[c] = v[c] + v[d];
      v[b] = rotr(v[b] ^ v[c], 63);
    };
    for (int r = 0; r < 12; r++) {
      const uint8_t* s = SIGMA[r];
      g(0, 4, 8, 12, m[s[0]], m[s[1]]);
      g(1, 5, 9, 13, m[s[2]], m[s[3]]);
      g(2, 6, 10, 14, m[s[4]], m[s[5]]);
      g(3, 7, 11, 15, m[s[6]], m[s[7]]);
      g(0, 5, 10, 15, m[s[8]], m[s[9]]);
      g(1, 6, 11, 12, m[s[10]], m[s[11]]);
      g(2, 7, 8, 13, m[s[12]], m[s[13]]);
      g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; i++) h_[i] ^= v[i] ^ v[i + 8];
  }

  uint64_t h_[8];
  uint8_t buf_[128] = {0};
  size_t fill_ = 0;
  uint64_t counter_ = 0;
};

}  // namespace mzk
