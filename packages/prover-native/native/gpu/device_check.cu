// Not a kernel mzk runs: a compile check that the GPU arithmetic (field32.hpp, g1xyzz.hpp) builds
// as device code. test/gpuArithmetic.test.ts compiles it with nvcc where nvcc is installed
// (nvcc -std=c++17 -arch=sm_90 -c), so a host-only construct in the shared headers fails a test
// even on machines without a GPU.
#include "g1xyzz.hpp"

using mzk::gpu::Fq32;
using mzk::gpu::Fr32;
using mzk::gpu::G1Affine32;
using mzk::gpu::G1Xyzz;

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
