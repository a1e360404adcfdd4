// The device check of the GPU MSM, for a machine with a CUDA device and no Node: a static program
// that makes random G1 bases and scalars, computes Σ s·P on the device (msm_cuda.cuh) and on the
// host with the same arithmetic and schedule (msmplan.hpp's msm, which the test suite checks against
// the BigInt reference and the CPU prover), and exits 0 only when every result is equal bit for bit
// (1: a difference, 2: bad arguments, 3: no usable device, 4: bad inputs). It prints each step's
// time; nothing here is tuned yet.
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -o gpu_check native/gpu/gpu_check.cu
//   ./gpu_check [log2 n, default 16] [window bits, default 0 = chosen] [seed]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "msm_cuda.cuh"

using namespace mzk::gpu;

namespace {

/** G1's generator (1, 2), in Montgomery form. */
G1Affine32 generator() {
  Limbs x{}, y{};
  x.v[0] = 1;
  y.v[0] = 2;
  return G1Affine32{Fq32::fromPlain(x), Fq32::fromPlain(y)};
}

/**
 * n distinct bases: the multiples G, 2G, 3G, … (one mixed addition each), made affine with one
 * inversion for all of them (Montgomery's trick): 1/ZZ = (1/ZZZ)²·ZZ² since ZZZ² = ZZ³.
 */
std::vector<G1Affine32> bases(size_t n) {
  const G1Affine32 g = generator();
  std::vector<G1Xyzz> points(n);
  G1Xyzz p = G1Xyzz::fromAffine(g);
  for (size_t i = 0; i < n; i++) {
    points[i] = p;
    p = p.addAffine(g);
  }
  std::vector<Fq32> prefix(n + 1);
  prefix[0] = Fq32::one();
  for (size_t i = 0; i < n; i++) prefix[i + 1] = prefix[i] * points[i].ZZZ;
  Fq32 inverse = prefix[n].inverse();
  std::vector<G1Affine32> out(n);
  for (size_t i = n; i-- > 0;) {
    const Fq32 invZZZ = inverse * prefix[i];
    inverse = inverse * points[i].ZZZ;
    const Fq32 invZZ = invZZZ.squared() * points[i].ZZ.squared();
    out[i] = G1Affine32{points[i].X * invZZ, points[i].Y * invZZZ};
  }
  return out;
}

/** Scalars below 2^253 (< r), 8 plain limbs each; every 97th is 0, every 89th is 1. */
std::vector<u32> scalars(size_t n, std::mt19937_64& rng) {
  std::vector<u32> s(n * LIMBS);
  for (size_t i = 0; i < n; i++) {
    u32* limbs = &s[i * LIMBS];
    for (int k = 0; k < LIMBS; k++) limbs[k] = (u32)rng();
    limbs[LIMBS - 1] &= 0x1fffffffu;
    if (i % 97 == 3) std::fill(limbs, limbs + LIMBS, 0u);
    if (i % 89 == 5) {
      std::fill(limbs, limbs + LIMBS, 0u);
      limbs[0] = 1;
    }
  }
  return s;
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int logN = argc > 1 ? std::atoi(argv[1]) : 16;
  const int c = argc > 2 ? std::atoi(argv[2]) : 0;
  const unsigned long long seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 20261130ULL;
  if (logN < 0 || logN > 26) {
    std::fprintf(stderr, "log2 n must be 0..26\n");
    return 2;
  }
  const size_t n = (size_t)1 << logN;
  std::mt19937_64 rng(seed);
  try {
    int devices = 0;
    cudaCheck(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    cudaDeviceProp prop{};
    cudaCheck(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device: %s (compute %d.%d), %d device(s)\n", prop.name, prop.major, prop.minor, devices);

    auto started = std::chrono::steady_clock::now();
    const std::vector<G1Affine32> points = bases(n);
    const std::vector<u32> s = scalars(n, rng);
    // Both sides would agree on garbage made by a wrong inversion: every base must be on the curve.
    for (size_t i = 0; i < n; i++) {
      if (!points[i].onCurve()) {
        std::fprintf(stderr, "gpu_check: base %zu is not on the curve\n", i);
        return 4;
      }
    }
    std::printf("inputs: n = 2^%d, seed %llu, %.0f ms\n", logN, seed, msSince(started));

    started = std::chrono::steady_clock::now();
    const G1Affine32 host = msm<G1Xyzz>(points.data(), s.data(), n, c).toAffine();
    std::printf("host msm (one thread): %.1f ms\n", msSince(started));

    bool same = true;
    for (int run = 0; run < 3; run++) {
      DeviceMsmTimes t;
      started = std::chrono::steady_clock::now();
      const G1Affine32 device = deviceMsm<G1Xyzz>(points.data(), s.data(), n, c, &t).toAffine();
      const bool equal = device == host;
      same = same && equal;
      std::printf("device msm run %d: %s; total %.2f ms (plan %.2f, upload %.2f, accumulate %.2f, integrate %.2f, finish %.2f)\n", run,
                  equal ? "equal" : "DIFFERENT", msSince(started), t.plan, t.upload, t.accumulate, t.integrate, t.finish);
    }
    std::printf("%s\n", same ? "PASS" : "FAIL");
    return same ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_check: %s\n", e.what());
    return 3;
  }
}
