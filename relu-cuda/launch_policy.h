// How the CUDA kernels are launched: the functions that pick threads per block, 16-byte
// vectors per thread, the grid and the cache hints, from the device's properties and the
// size of the pass. The dense pass depends only on the element count; a strided pass also on
// its row length (choose_strided_launch_policy, at the end).
//
// Every constant names the measurement that chose it (H200, scripts/h200_tune.py). For other
// architectures (8.0, 8.9, 10.0, 12.0) nobody here could run a kernel: the same choices are
// applied there as a GUESS, not a measurement.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include <cuda_runtime.h>

#include "relu-cuda/cuda_check.h"
#include "relu-cuda/memory.cuh"

namespace relu_kernel {

// What the policy reads from a device; queried once per device and cached, so a call
// costs no driver query.
struct DeviceTraits {
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int compute_capability = 0;  // major * 10 + minor
};

inline const DeviceTraits& device_traits(int32_t device) {
  static std::once_flag once;
  static std::vector<DeviceTraits> traits;
  std::call_once(once, [] {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count));
    traits.resize(size_t(count));
    for (size_t d = 0; d < traits.size(); ++d) {
      int sms = 0, l2 = 0, major = 0, minor = 0;
      check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, int(d)));
      check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, int(d)));
      check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, int(d)));
      check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, int(d)));
      traits[d] = DeviceTraits{sms, l2, major * 10 + minor};
    }
  });
  return traits.at(size_t(device));
}

struct LaunchPolicy {
  int threads;             // per block
  int vectors_per_thread;  // 16-byte vectors each thread moves per loop trip: 1, 2 or 4
  int64_t blocks;          // grid size; the kernel loops when the grid covers less
  CacheHint load_hint;
  CacheHint store_hint;
};

// The largest grid.x any CUDA device accepts.
constexpr int64_t kMaxGridX = 2147483647;

// The measurements behind the constants below, each from `scripts/h200.sh tests tune
// l2band` on an H200 (132 SMs, 60 MiB L2), GPU time per call from CUDA-graph replay,
// float32 unless named: results/h200/run1/ (vectors, threads, grid: tune.json, isolated
// calls hot and cold, float32/float16/bfloat16/int8, 4 KiB..1 GiB, about 20 launch variants
// per size beside torch.relu and the copy ceiling) and results/h200/run2/ (the cache hints:
// the same again plus l2_band.json, relu between a producer and a consumer kernel,
// L2_BAND_CLIFF.md). results/h200/run3/ repeated both with this policy in place, on
// another machine, and reproduced every choice.

// One 16-byte vector per thread and loop trip. 2, 4 and 8 were never faster from 16 MiB
// up and 3-4% slower at DRAM sizes (1 GiB cold: 500.9 us with 1, 520.9 with 2; 64 MiB cold:
// 33.45 vs 34.29 us), as ANCHORS.md reports for a 4x unroll; below 16 MiB the best count
// changed from size to size within +-2%.
constexpr int kVectorsPerThread = 1;

// Threads per block: 256 (1 MiB hot: 1.76 us with 256, 1.82 with 128; 512 and 1024 were
// slower at every size, up to 1.63 vs 1.27 us at 4 KiB) unless that grid would not reach
// every SM once (fewer than sm_count * 256 vectors: 528 KiB on the H200). Such a tensor is
// a few blocks, and blocks of 128 spread it over twice the SMs: 4 KiB 1.26 vs 1.27 us
// (float16 1.46 vs 1.50, bfloat16 1.57 vs 1.59, int8 1.46 vs 1.47), 64 KiB 1.44 vs 1.45
// (bfloat16 1.58 vs 1.60): small gains, at the resolution of the timing.
constexpr int kThreads = 256;
constexpr int kThreadsBelowOneWave = 128;

// Streaming (evict-first) loads and stores only for passes whose tensors together
// (inputs + output) fill at least 3/4 of the L2, 45 MiB on the H200 (a 22.5 MiB forward
// input). Below that, a consumer of relu's output usually finds it in L2, and streaming
// stores took that away: relu inside a producer -> relu -> consumer chain (float32) cost
// 4.20 us with plain accesses and 4.83 with streaming ones at 8 MiB, 5.38 vs 6.89 at
// 16 MiB (L2_BAND_CLIFF.md). From 24 MiB up the same chain gained instead, 2-10% from 32
// to 80 MiB (48 MiB: 24.26 vs 25.71 us), and isolated calls were even (1 GiB cold: 500.6
// vs 501.0 us; 64 MiB cold: 33.34 vs 33.54). The price below the threshold: an isolated
// call on cold data, never reused, is 2-7% slower than with streaming (1 MiB cold: 2.47 vs
// 2.29 us, 8 MiB cold: 6.17 vs 5.99; torch.relu 2.39 and 5.88).
constexpr int64_t kStreamingFootprintL2Numerator = 3;
constexpr int64_t kStreamingFootprintL2Denominator = 4;

// A grid that covers the tensor once, one vector per thread: persistent grids of 4, 8 or
// 16 blocks per SM with a grid-stride loop were slower (8 MiB cold: 6.85, 6.38, 6.28 us
// against 6.27), as ANCHORS.md found for 8 per SM. The kernel still loops, so a grid
// capped at kMaxGridX covers any count.

// For capabilities 8.0, 8.9, 10.0 and 12.0 the same choices apply, the wave size scaled by
// their SM count and the streaming threshold by their L2 size: a GUESS, unmeasured. The
// compute capability changed no choice on the H200 and is carried for a later retune.

inline int64_t blocks_for(int64_t units, int64_t units_per_block) {
  const int64_t blocks = (units + units_per_block - 1) / units_per_block;
  if (blocks < 1) return 1;  // the block that writes the head and tail
  return blocks < kMaxGridX ? blocks : kMaxGridX;
}

// `vectors`: whole 16-byte vectors of each tensor (the head and tail elements ride along);
// `tensors`: how many tensors the pass reads and writes (2 forward, 3 backward).
inline LaunchPolicy choose_launch_policy(const DeviceTraits& device, int64_t vectors,
                                         int tensors) {
  const int64_t footprint_bytes = vectors * kVectorBytes * tensors;
  LaunchPolicy policy{};
  policy.threads =
      vectors < int64_t(device.sm_count) * kThreads ? kThreadsBelowOneWave : kThreads;
  policy.vectors_per_thread = kVectorsPerThread;
  const bool streaming = footprint_bytes * kStreamingFootprintL2Denominator >=
                         device.l2_bytes * kStreamingFootprintL2Numerator;
  const CacheHint hint = streaming ? CacheHint::kStreaming : CacheHint::kDefault;
  policy.load_hint = hint;
  policy.store_hint = hint;
  policy.blocks = blocks_for(vectors, int64_t(policy.threads) * policy.vectors_per_thread);
  return policy;
}

// Operands whose addresses differ modulo 16: one element per thread (a fallback for views
// at odd offsets, not tuned).
inline LaunchPolicy choose_scalar_launch_policy(const DeviceTraits& device, int64_t elements) {
  (void)device;
  LaunchPolicy policy{};
  policy.threads = kThreads;
  policy.vectors_per_thread = 0;
  policy.load_hint = CacheHint::kDefault;
  policy.store_hint = CacheHint::kDefault;
  policy.blocks = blocks_for(elements, policy.threads);
  return policy;
}

// ---- Strided passes (strided.cuh): operands that are not one dense block each. Only the
// short-row threshold is measured (one H200 run of benchmarks/views.py); the other choices
// carry the dense pass's measurements over or are reasoned from the hardware.

// A row kernel's block moves one tile of a row: kVectorsPerThread 16-byte units per thread
// (vectors where the row is dense and aligned alike, else as many elements). Blocks shrink to
// fit a short row, down to 64 threads: the smallest block that still fills an SM (32 resident
// blocks of 64 threads = 2048 threads on capabilities 8.0 and 9.0; 24 of 64 = 1536 on 8.9).
constexpr int kMinRowThreads = 64;

// Rows shorter than 2 KiB (a 128-thread block of 16-byte units) go one element per thread,
// each element's offsets found from its linear index. Measured on the H200
// (results/h200/views/, benchmarks/views.py, 8192 x 16384 source): a 3-D permute whose rows
// are 192 elements ran at 0.98x torch in float32 (768-byte rows: row-kernel blocks of 64
// threads, 16 of them idle, one small block per row) and at 1.23x (bfloat16, 384 bytes) and
// 1.18x (int8, 192 bytes) through the per-element kernel. Rows of 2 KiB and more fill blocks
// of at least 128 threads. Between 768 bytes and 2 KiB the threshold is reasoned, not measured.
constexpr int64_t kShortRowBytes = int64_t(128) * kVectorBytes;

// Elements per thread whose loads are issued together where a kernel moves single elements
// and has few registers to spare: the per-element kernel, and the rows of the row kernel's
// vector variant that no vector covers (more would cost that kernel occupancy on every row).
// 4, as TensorIterator's non-vectorized kernel (vt = 4 in CUDALoops.cuh).
constexpr int kScalarElementsInFlight = 4;

struct StridedLaunchPolicy {
  bool per_element;       // the per-element kernel, else the row kernel
  LaunchPolicy launch;    // threads, blocks and hints of the kernel chosen
  int64_t tiles_per_row;  // row kernel: blocks per row, each threads * vectors_per_thread
                          // 16-byte units of it
};

// `numel` elements of `element_bytes`, in rows of `row_length` (a StridedLayout's sizes[0]),
// read and written by `tensors` tensors. Threads per block and the streaming hint follow the
// dense pass's policy for the same number of bytes (footprint: the elements moved, not the
// span of the views). The per-element kernel keeps default hints: it serves an uncommon
// layout, and one hint pair keeps its kernels half as many.
inline StridedLaunchPolicy choose_strided_launch_policy(const DeviceTraits& device,
                                                        int64_t numel, int64_t row_length,
                                                        int element_bytes, int tensors) {
  const int64_t vectors = (numel * element_bytes + kVectorBytes - 1) / kVectorBytes;
  const LaunchPolicy dense = choose_launch_policy(device, vectors, tensors);
  StridedLaunchPolicy policy{};
  policy.launch = dense;
  policy.per_element = row_length * element_bytes < kShortRowBytes;
  if (policy.per_element) {
    policy.launch.vectors_per_thread = 0;
    policy.launch.load_hint = CacheHint::kDefault;
    policy.launch.store_hint = CacheHint::kDefault;
    policy.launch.blocks = blocks_for(numel, int64_t(dense.threads) * kScalarElementsInFlight);
    return policy;
  }
  const int64_t elements_per_thread =
      int64_t(dense.vectors_per_thread) * (kVectorBytes / element_bytes);
  int threads = dense.threads;
  while (threads > kMinRowThreads && int64_t(threads / 2) * elements_per_thread >= row_length) {
    threads /= 2;
  }
  policy.launch.threads = threads;
  const int64_t tile_elements = int64_t(threads) * elements_per_thread;
  policy.tiles_per_row = (row_length + tile_elements - 1) / tile_elements;
  // One block per tile, as the dense grid covers the tensor once; the kernel loops past
  // kMaxGridX.
  policy.launch.blocks = blocks_for(numel / row_length * policy.tiles_per_row, 1);
  return policy;
}

}  // namespace relu_kernel
