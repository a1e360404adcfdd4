// Not a kernel mzk runs: a compile check that the GPU arithmetic (field32.hpp, fq2.hpp, g1xyzz.hpp,
// g2xyzz.hpp, ntt32.hpp) builds as device code. test/gpuArithmetic.test.ts compiles it with nvcc
// where nvcc is installed (nvcc -std=c++17 -arch=sm_90 -c), so a host-only construct in the shared
// headers fails a test even on machines without a GPU.
#include "g1xyzz.hpp"
#include "g2xyzz.hpp"
#include "ntt32.hpp"

using mzk::gpu::Fq2_32;
using mzk::gpu::Fq32;
using mzk::gpu::Fr32;
using mzk::gpu::G1Affine32;
using mzk::gpu::G1Xyzz;
using mzk::gpu::G2Affine32;
using mzk::gpu::G2Xyzz;
using mzk::gpu::u32;

/** Each thread: a Montgomery product in both fields, then its point added into a bucket, twice. */
__global__ void deviceCheck(const G1Affine32* points, const Fr32* scalars, G1Xyzz* buckets, Fq32* products, Fr32* scalarsOut, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const G1Affine32 p = points[i];
  products[i] = p.x * p.y;
  scalarsOut[i] = scalars[i].squared() - scalars[i];
  G1Xyzz b = buckets[i].addAffine(p);
  b = b.add(G1Xyzz::fromAffine(p.negated())).dbl();
  buckets[i] = b;
}

// G2's operations over Fq2 (Karatsuba product, squaring, the norm inverse), one kernel each:
// every Fq2 product is three inlined Fq products, and one kernel holding them all takes ptxas
// minutes where these take seconds.
__global__ void deviceCheckFq2(const Fq2_32* a, Fq2_32* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = (a[i] * out[i] + a[i].squared() - (-a[i])).inverse();
}

__global__ void deviceCheckG2Madd(const G2Affine32* points, G2Xyzz* buckets, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  buckets[i] = buckets[i].addAffine(points[i].negated());
}

__global__ void deviceCheckG2Add(const G2Xyzz* others, G2Xyzz* buckets, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  buckets[i] = buckets[i].add(others[i]);
}

__global__ void deviceCheckG2Affine(const G2Xyzz* buckets, G2Affine32* affine, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  affine[i] = buckets[i].dbl().toAffine();
}

/** One NTT stage, the permutation and a scale pass, a thread an index, as the NTT kernels will be. */
__global__ void deviceCheckNtt(Fr32* a, const Fr32* twiddles, const Fr32* factors, int logN, int stage) {
  const u32 k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= (1u << logN) / 2) return;
  mzk::gpu::bitReverseStep(a, logN, k);
  mzk::gpu::butterflyStep(a, twiddles, logN, stage, k);
  mzk::gpu::scaleStep(a, factors, k);
  if (k == 0) a[0] = a[0] * mzk::gpu::rootOfUnity32(logN);
}
