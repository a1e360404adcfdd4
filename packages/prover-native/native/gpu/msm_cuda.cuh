// The MSM on a CUDA device, first version: the schedule of msmplan.hpp with its steps 3 and 4 as
// kernels (one thread per (window, bucket) accumulating its run of points, then one thread per
// window for the running sum), steps 1 and 2 and 5 on the host. It is written to be checked bit for
// bit against msm() on the CPU (gpu_check.cu) before anything is made fast: one thread per bucket
// leaves the load unbalanced (a bucket's run is as long as its digit is common), there is no radix
// sort on the device, no batch-affine addition, and the points are copied for every call.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "msmplan.hpp"

namespace mzk {
namespace gpu {

/** Steps of one device MSM, in milliseconds (CUDA events). */
struct DeviceMsmTimes {
  float plan = 0;        // digits and grouping, on the host
  float upload = 0;      // points, entries and offsets to the device
  float accumulate = 0;  // the bucket kernel
  float integrate = 0;   // the window kernel
  float finish = 0;      // window sums back, combined on the host
};

inline void cudaCheck(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

/** Each thread one key (window·buckets + bucket): the sum of its run of points, signs applied. */
template <class Point>
__global__ void accumulateBuckets(const typename Point::Affine* bases, const u32* offsets, const u32* entries, u32 keys, Point* buckets) {
  const u32 key = blockIdx.x * blockDim.x + threadIdx.x;
  if (key >= keys) return;
  Point acc = Point::infinity();
  for (u32 e = offsets[key]; e < offsets[key + 1]; e++) {
    const u32 entry = entries[e];
    const typename Point::Affine p = bases[entry & ~SIGN_BIT];
    acc = acc.addAffine((entry & SIGN_BIT) != 0 ? p.negated() : p);
  }
  buckets[key] = acc;
}

/** Each thread one window: Σ_b (b + 1)·bucket_b by the running sum from the top (weightedBucketSum). */
template <class Point>
__global__ void integrateWindows(const Point* buckets, u32 perWindow, int windows, Point* sums) {
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w >= windows) return;
  const Point* own = buckets + (size_t)w * perWindow;
  Point running = Point::infinity(), sum = Point::infinity();
  for (u32 b = perWindow; b-- > 0;) {
    running = running.add(own[b]);
    sum = sum.add(running);
  }
  sums[w] = sum;
}

/** A device buffer freed with its scope. */
template <class T>
struct DeviceBuffer {
  T* data = nullptr;
  explicit DeviceBuffer(size_t count) { cudaCheck(cudaMalloc(&data, count == 0 ? 1 : count * sizeof(T)), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/** Σ scalars[i]·bases[i] on the device, as msm<Point>() computes it on the host (same arguments). */
template <class Point>
Point deviceMsm(const typename Point::Affine* bases, const u32* scalars, size_t n, int c, DeviceMsmTimes* times) {
  using Affine = typename Point::Affine;
  if (c == 0) c = chooseWindowBits(n);
  checkWindowBits(c);
  cudaEvent_t marks[6];
  for (cudaEvent_t& m : marks) cudaCheck(cudaEventCreate(&m), "cudaEventCreate");
  cudaCheck(cudaEventRecord(marks[0]), "cudaEventRecord");

  const int W = windowsFor(c);
  std::vector<u32> digits((size_t)W * n);
  signedDigits(scalars, n, c, digits.data());
  const BucketGroups g = groupByBucket(digits.data(), n, c);
  const u32 keys = (u32)W * g.buckets;
  cudaCheck(cudaEventRecord(marks[1]), "cudaEventRecord");

  DeviceBuffer<Affine> dBases(n);
  DeviceBuffer<u32> dOffsets(g.offsets.size());
  DeviceBuffer<u32> dEntries(g.entries.size());
  DeviceBuffer<Point> dBuckets(keys);
  DeviceBuffer<Point> dSums(W);
  cudaCheck(cudaMemcpy(dBases.data, bases, n * sizeof(Affine), cudaMemcpyHostToDevice), "copy bases");
  cudaCheck(cudaMemcpy(dOffsets.data, g.offsets.data(), g.offsets.size() * sizeof(u32), cudaMemcpyHostToDevice), "copy offsets");
  cudaCheck(cudaMemcpy(dEntries.data, g.entries.data(), g.entries.size() * sizeof(u32), cudaMemcpyHostToDevice), "copy entries");
  cudaCheck(cudaEventRecord(marks[2]), "cudaEventRecord");

  const u32 block = 128;
  accumulateBuckets<Point><<<(keys + block - 1) / block, block>>>(dBases.data, dOffsets.data, dEntries.data, keys, dBuckets.data);
  cudaCheck(cudaGetLastError(), "accumulateBuckets launch");
  cudaCheck(cudaEventRecord(marks[3]), "cudaEventRecord");
  integrateWindows<Point><<<(W + 31) / 32, 32>>>(dBuckets.data, g.buckets, W, dSums.data);
  cudaCheck(cudaGetLastError(), "integrateWindows launch");
  cudaCheck(cudaEventRecord(marks[4]), "cudaEventRecord");

  std::vector<Point> sums(W);
  cudaCheck(cudaMemcpy(sums.data(), dSums.data, W * sizeof(Point), cudaMemcpyDeviceToHost), "copy window sums");
  Point total = Point::infinity();
  for (int w = W - 1; w >= 0; w--) {
    if (w != W - 1)
      for (int k = 0; k < c; k++) total = total.dbl();
    total = total.add(sums[w]);
  }
  cudaCheck(cudaEventRecord(marks[5]), "cudaEventRecord");
  cudaCheck(cudaEventSynchronize(marks[5]), "cudaEventSynchronize");
  if (times != nullptr) {
    float* fields[5] = {&times->plan, &times->upload, &times->accumulate, &times->integrate, &times->finish};
    for (int i = 0; i < 5; i++) cudaCheck(cudaEventElapsedTime(fields[i], marks[i], marks[i + 1]), "cudaEventElapsedTime");
  }
  for (cudaEvent_t& m : marks) cudaEventDestroy(m);
  return total;
}

}  // namespace gpu
}  // namespace mzk
