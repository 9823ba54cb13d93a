// How the CUDA kernels are launched: one function per decision (the dense kernel's form,
// threads per block, the cache hint, the grid; for a strided pass also which kernel and how
// many tiles per row), from the device's properties and the size of the pass. The dense pass
// depends only on the element count; a strided pass also on its row length.
//
// Each constant carries the measurement that chose it, on the H200 (132 SMs, 60 MiB L2;
// GPU time per call from CUDA-graph replay, float32 unless named); PERFORMANCE.md, "Why the
// constants are what they are", has the runs. Other architectures (8.0, 8.9, 10.0, 12.0)
// get the same choices, the wave size scaled by their SM count and the streaming threshold
// by their L2 size: unmeasured.
#pragma once

#include <cstdint>
#include <mutex>
#include <type_traits>
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
  int max_threads_per_sm = 0;  // resident threads per SM: how many blocks one wave holds
};

inline const DeviceTraits& device_traits(int32_t device) {
  static std::once_flag once;
  static std::vector<DeviceTraits> traits;
  std::call_once(once, [] {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count));
    traits.resize(size_t(count));
    for (size_t d = 0; d < traits.size(); ++d) {
      int sms = 0, l2 = 0, threads_per_sm = 0;
      check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, int(d)));
      check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, int(d)));
      check_cuda(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                        int(d)));
      traits[d] = DeviceTraits{sms, l2, threads_per_sm};
    }
  });
  return traits.at(size_t(device));
}

// What the kernels take at run time: everything else is a compile-time constant of theirs.
// Loads and stores share one hint (visit_cache_hint instantiates a kernel for each).
struct LaunchPolicy {
  int threads;     // per block
  int64_t blocks;  // grid size; the kernels loop when the grid covers less
  CacheHint hint;
};

// The largest grid.x any CUDA device accepts.
constexpr int64_t kMaxGridX = 2147483647;

// 16-byte vectors each thread moves per loop trip in the streaming form and the strided row
// kernels: 2 was 4% slower at 1 GiB cold (500.9 us with 1, 520.9 with 2).
constexpr int kVectorsPerThread = 1;

// Threads per block: 256 beat 128 at 1 MiB hot (1.76 vs 1.82 us) and 512 or 1024 at every size.
constexpr int kThreads = 256;
// Below one wave of 256-thread blocks, 128 spreads the few blocks over twice the SMs: 4 KiB
// 1.26 vs 1.27 us, a gain at the resolution of the timing.
constexpr int kThreadsBelowOneWave = 128;

// Streaming hints from a footprint (inputs + output) of 3/4 of the L2, 45 MiB: below it a
// consumer found relu's output in L2 (producer -> relu -> consumer at 8 MiB: 4.20 us plain,
// 4.83 streaming); from 24 MiB of input up that chain gained 2-10% with streaming.
constexpr int64_t kStreamingFootprintL2Numerator = 3;
constexpr int64_t kStreamingFootprintL2Denominator = 4;

// Grid: one that covers the tensor once, capped at kMaxGridX (the kernels loop past it):
// persistent grids of 4, 8 or 16 blocks per SM were slower (8 MiB cold: 6.85, 6.38, 6.28 us
// against 6.27).
inline int64_t blocks_for(int64_t units, int64_t units_per_block) {
  const int64_t blocks = (units + units_per_block - 1) / units_per_block;
  if (blocks < 1) return 1;  // the block that writes the head and tail
  return blocks < kMaxGridX ? blocks : kMaxGridX;
}

// Threads per block for a pass of `vectors` 16-byte units.
inline int threads_for(const DeviceTraits& device, int64_t vectors) {
  return vectors < int64_t(device.sm_count) * kThreads ? kThreadsBelowOneWave : kThreads;
}

// The cache hint for a pass whose tensors together move `footprint_bytes`.
inline CacheHint cache_hint_for(const DeviceTraits& device, int64_t footprint_bytes) {
  const bool streaming = footprint_bytes * kStreamingFootprintL2Denominator >=
                         device.l2_bytes * kStreamingFootprintL2Numerator;
  return streaming ? CacheHint::kStreaming : CacheHint::kDefault;
}

// The streaming form's and the strided passes' threads, grid and hint. `vectors`: whole
// 16-byte vectors of each tensor (the head and tail elements ride along); `tensors`: how many
// tensors the pass reads and writes (2 forward, 3 backward).
inline LaunchPolicy choose_launch_policy(const DeviceTraits& device, int64_t vectors,
                                         int tensors) {
  const int threads = threads_for(device, vectors);
  return LaunchPolicy{threads, blocks_for(vectors, int64_t(threads) * kVectorsPerThread),
                      cache_hint_for(device, vectors * kVectorBytes * tensors)};
}

// The dense vector kernel's compiled forms, each one kernel per op and format:
//   kTileOneVector, kTileTwoVectors: a pass that stays in the L2 (footprint below the
//            streaming threshold): one tile per block, no loop, 32-bit offsets, every vector's
//            load and store predicated on its own bound, default hints; 1 vector x 256 threads
//            while that grid fits one wave of resident threads, else 2 x 128 (a wave holds
//            twice the bytes);
//   kStream: from the threshold up: a grid-stride loop over choose_launch_policy's grid,
//            kVectorsPerThread per trip, 64-bit offsets, streaming hints.
enum class DenseForm : uint8_t { kTileOneVector, kTileTwoVectors, kStream };

// Straight-line tiles (1 x 256 up to 4 MiB, 2 x 128 above) against the previous 2 x 128 tile
// (a whole-tile branch, 64-bit offsets, block 0's head and tail first), 256 KiB-32 MiB, 4
// dtypes, hot and rotated: 0.955x its time, geometric mean (float32 256 KiB: 1.23 vs 1.29 us);
// at 8 MiB float32 rotated, where 1 x 256 needs two waves, 2 x 128 3.50 us against 3.71.
// Both tiles hold 256 vectors (1 x 256 threads, 2 x 128), so the two grids are one.
constexpr int kTileVectorsPerBlock = 256;

template <DenseForm kForm>
struct DenseFormTraits;
template <>
struct DenseFormTraits<DenseForm::kTileOneVector> {
  static constexpr int kVectors = 1;
  static constexpr bool kLoops = false;
  static constexpr CacheHint kHint = CacheHint::kDefault;
};
template <>
struct DenseFormTraits<DenseForm::kTileTwoVectors> {
  static constexpr int kVectors = 2;
  static constexpr bool kLoops = false;
  static constexpr CacheHint kHint = CacheHint::kDefault;
};
template <>
struct DenseFormTraits<DenseForm::kStream> {
  static constexpr int kVectors = kVectorsPerThread;
  static constexpr bool kLoops = true;
  static constexpr CacheHint kHint = CacheHint::kStreaming;
};

// Calls fn(std::integral_constant<DenseForm, form>{}), as visit_cache_hint: a launcher
// instantiates its kernel for every form here.
template <typename Fn>
void visit_dense_form(DenseForm form, Fn&& fn) {
  switch (form) {
    case DenseForm::kTileOneVector:
      return fn(std::integral_constant<DenseForm, DenseForm::kTileOneVector>{});
    case DenseForm::kTileTwoVectors:
      return fn(std::integral_constant<DenseForm, DenseForm::kTileTwoVectors>{});
    case DenseForm::kStream: return fn(std::integral_constant<DenseForm, DenseForm::kStream>{});
  }
}

struct DensePolicy {
  DenseForm form;
  LaunchPolicy launch;  // its hint is always the form's
};

// The tile forms' 32-bit offsets reach every vector of a grid of this many (a tile past the
// last vector included); a pass that stays in the L2 of any device has far fewer.
constexpr int64_t kMaxTileFormVectors = int64_t(INT32_MAX) - 2 * kTileVectorsPerBlock;

// Threads per block of a tile form moving `vectors_per_thread` vectors each.
constexpr int tile_threads(int vectors_per_thread) {
  return kTileVectorsPerBlock / vectors_per_thread;
}

// The dense pass (arguments as choose_launch_policy's). The tile forms' kernels do not loop,
// so they are chosen only where their grid covers every vector.
inline DensePolicy choose_dense_policy(const DeviceTraits& device, int64_t vectors, int tensors) {
  const LaunchPolicy stream = choose_launch_policy(device, vectors, tensors);
  if (stream.hint == CacheHint::kDefault && vectors <= kMaxTileFormVectors) {
    // One wave of 1 x 256 blocks moves one vector per resident thread.
    const bool one_wave = vectors <= int64_t(device.sm_count) * device.max_threads_per_sm;
    const DenseForm form = one_wave ? DenseForm::kTileOneVector : DenseForm::kTileTwoVectors;
    int threads = 0;
    visit_dense_form(form, [&](auto f) {
      threads = tile_threads(DenseFormTraits<decltype(f)::value>::kVectors);
    });
    return DensePolicy{form, LaunchPolicy{threads, blocks_for(vectors, kTileVectorsPerBlock),
                                          CacheHint::kDefault}};
  }
  return DensePolicy{DenseForm::kStream,
                     LaunchPolicy{stream.threads, stream.blocks, CacheHint::kStreaming}};
}

// ---- Strided passes (strided.cuh): operands that are not one dense block each. Only the
// short-row threshold is measured; the other choices carry the dense pass's over or are
// reasoned from the hardware.

// A row kernel's block moves one tile of a row: kVectorsPerThread 16-byte units per thread
// (vectors where every operand's row has stride 1, else as many elements). Blocks shrink to
// fit a short row, down to 64 threads: the smallest block that still fills an SM (32 resident
// blocks of 64 threads = 2048 threads on capabilities 8.0 and 9.0; 24 of 64 = 1536 on 8.9).
constexpr int kMinRowThreads = 64;

// Rows shorter than 2 KiB (a 128-thread block of 16-byte units) go one element per thread:
// permuted rows of 384 and 192 bytes ran 1.23x and 1.18x torch that way, 768-byte ones 0.98x
// through the row kernel. Between 768 bytes and 2 KiB the threshold is reasoned, not measured.
constexpr int64_t kShortRowBytes = int64_t(128) * kVectorBytes;

// Elements per thread whose loads are issued together in the per-element kernel, which has
// few registers to spare. 4, as TensorIterator's non-vectorized kernel (vt = 4 in
// CUDALoops.cuh).
constexpr int kScalarElementsInFlight = 4;

struct StridedLaunchPolicy {
  bool per_element;       // the per-element kernel, else the row kernel
  LaunchPolicy launch;    // threads, blocks and hint of the kernel chosen
  int64_t tiles_per_row;  // row kernel: blocks per row, each threads * kVectorsPerThread
                          // 16-byte units of it
};

// Whether rows of `row_length` elements go through the per-element kernel.
inline bool is_short_row(int64_t row_length, int element_bytes) {
  return row_length * element_bytes < kShortRowBytes;
}

// The row kernel's threads per block: the dense pass's, halved while half a block still
// covers the row, down to kMinRowThreads.
inline int row_threads_for(int dense_threads, int64_t row_length, int64_t elements_per_thread) {
  int threads = dense_threads;
  while (threads > kMinRowThreads && int64_t(threads / 2) * elements_per_thread >= row_length) {
    threads /= 2;
  }
  return threads;
}

// `numel` elements of `element_bytes`, in rows of `row_length` (a StridedLayout's sizes[0]),
// read and written by `tensors` tensors. Threads per block and the hint follow the dense
// pass's policy for the same number of bytes (footprint: the elements moved, not the span of
// the views). The per-element kernel takes no hint: it serves an uncommon layout, and one
// form keeps its kernels half as many.
inline StridedLaunchPolicy choose_strided_launch_policy(const DeviceTraits& device,
                                                        int64_t numel, int64_t row_length,
                                                        int element_bytes, int tensors) {
  const int64_t vectors = (numel * element_bytes + kVectorBytes - 1) / kVectorBytes;
  const LaunchPolicy dense = choose_launch_policy(device, vectors, tensors);
  StridedLaunchPolicy policy{};
  policy.per_element = is_short_row(row_length, element_bytes);
  if (policy.per_element) {
    policy.launch = LaunchPolicy{
        dense.threads, blocks_for(numel, int64_t(dense.threads) * kScalarElementsInFlight),
        CacheHint::kDefault};
    return policy;
  }
  const int64_t elements_per_thread = int64_t(kVectorsPerThread) * (kVectorBytes / element_bytes);
  const int threads = row_threads_for(dense.threads, row_length, elements_per_thread);
  const int64_t tile_elements = int64_t(threads) * elements_per_thread;
  policy.tiles_per_row = (row_length + tile_elements - 1) / tile_elements;
  // One block per tile, as the dense grid covers the tensor once; the kernel loops past
  // kMaxGridX.
  policy.launch = LaunchPolicy{threads, blocks_for(numel / row_length * policy.tiles_per_row, 1),
                               dense.hint};
  return policy;
}

}  // namespace relu_kernel
