// How the CUDA kernels are launched: every decision in one function per pass (the dense
// kernel's form and grid; for a strided pass which kernel, its threads, hint and tiles per
// row), from the device's properties and the size of the pass. The dense pass depends only on
// the element count; a strided pass also on its row length.
//
// Each constant carries the measurement that chose it, on the H200 (132 SMs, 60 MiB L2;
// GPU time per call from CUDA-graph replay, float32 unless named); PERFORMANCE.md, "Why the
// constants are what they are", has the runs. Other architectures (7.5, 8.0, 8.9, 10.0, 12.0)
// get the same choices, one wave scaled by their SM count and resident threads and the
// streaming threshold by their L2 size: unmeasured.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "relu-cuda/cuda_check.h"
#include "relu-cuda/memory.cuh"

namespace relu_kernel {

// What the policy reads from a device.
struct DeviceTraits {
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int max_threads_per_sm = 0;  // resident threads per SM
};

// Queried once per process for every device and kept, so a call costs no driver query. A
// function-local static (thread-safe, and tried again if the query throws), not
// std::call_once: that would tie the binary to pthread_once@GLIBC_2.34.
inline const DeviceTraits& device_traits(int32_t device) {
  static const std::vector<DeviceTraits> traits = [] {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count));
    std::vector<DeviceTraits> all(static_cast<size_t>(count));
    for (int d = 0; d < count; ++d) {
      int sms = 0, l2 = 0, threads_per_sm = 0;
      check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
      check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d));
      check_cuda(
          cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, d));
      all[size_t(d)] = DeviceTraits{sms, l2, threads_per_sm};
    }
    return all;
  }();
  return traits.at(size_t(device));
}

// One wave: every resident thread of the device busy once.
inline int64_t one_wave_threads(const DeviceTraits& device) {
  return int64_t(device.sm_count) * device.max_threads_per_sm;
}

// The largest grid.x any CUDA device accepts.
constexpr int64_t kMaxGridX = 2147483647;

// Threads per block: 256 beat 128 at 1 MiB hot (1.76 vs 1.82 us) and 512 or 1024 at every size.
constexpr int kThreads = 256;

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

// The cache hint for a pass whose tensors together move `footprint_bytes`.
inline CacheHint cache_hint_for(const DeviceTraits& device, int64_t footprint_bytes) {
  const bool streaming = footprint_bytes * kStreamingFootprintL2Denominator >=
                         device.l2_bytes * kStreamingFootprintL2Numerator;
  return streaming ? CacheHint::kStreaming : CacheHint::kDefault;
}

// ---- The dense pass (relu_cuda.cu): one kernel per form, op and input alignment. A form is
// its traits: 16-byte vectors per thread, threads per block, whether the kernel loops (a
// grid-stride loop with 64-bit offsets, so any count is covered) or moves one tile per block
// (32-bit offsets, every vector's access predicated on its own bound, the grid covering
// every vector), and the cache hint of its loads and stores.
//   kTileOneVector, kTileTwoVectors: a pass that stays in the L2 (footprint below the
//            streaming threshold); 1 vector x 256 threads while that grid fits one wave, else
//            2 x 128 (a wave holds twice the bytes);
//   kStream: from the threshold up, streaming hints: one vector per thread and trip (2 was
//            4% slower at 1 GiB cold: 500.9 us with 1, 520.9 with 2).
// Straight-line tiles (1 x 256 up to 4 MiB, 2 x 128 above) against the previous 2 x 128 tile
// (a whole-tile branch, 64-bit offsets, block 0's head and tail first), 256 KiB-32 MiB, 4
// dtypes, hot and rotated: 0.955x its time, geometric mean (float32 256 KiB: 1.23 vs 1.29 us);
// at 8 MiB float32 rotated, where 1 x 256 needs two waves, 2 x 128 3.50 us against 3.71.
// A new form is an enumerator, its traits and its case in visit_dense_form.
enum class DenseForm : uint8_t { kTileOneVector, kTileTwoVectors, kStream };

template <DenseForm kForm>
struct DenseFormTraits;
template <>
struct DenseFormTraits<DenseForm::kTileOneVector> {
  static constexpr int kVectors = 1;
  static constexpr int kThreads = 256;
  static constexpr bool kLoops = false;
  static constexpr CacheHint kHint = CacheHint::kDefault;
};
template <>
struct DenseFormTraits<DenseForm::kTileTwoVectors> {
  static constexpr int kVectors = 2;
  static constexpr int kThreads = 128;
  static constexpr bool kLoops = false;
  static constexpr CacheHint kHint = CacheHint::kDefault;
};
template <>
struct DenseFormTraits<DenseForm::kStream> {
  static constexpr int kVectors = 1;
  static constexpr int kThreads = relu_kernel::kThreads;
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

// What the dense kernel takes at launch beyond its form (threads and hint are the form's).
struct DensePolicy {
  DenseForm form;
  int64_t blocks;  // the grid; a looping form loops when it covers less
};

// 16-byte vectors one block of `form` moves per tile.
inline int64_t vectors_per_block(DenseForm form) {
  int64_t vectors = 0;
  visit_dense_form(form, [&](auto f) {
    using Form = DenseFormTraits<decltype(f)::value>;
    vectors = int64_t(Form::kVectors) * Form::kThreads;
  });
  return vectors;
}

// Whether a tile form's 32-bit offsets reach every vector of its grid, a tile past the last
// vector included; a pass that stays in the L2 of any device has far fewer vectors.
inline bool tile_offsets_fit(int64_t vectors, int64_t vectors_per_block) {
  return vectors <= int64_t(INT32_MAX) - 2 * vectors_per_block;
}

// The dense pass of `vectors` whole 16-byte vectors (the head and tail elements ride along)
// over `tensors` tensors read and written (2 forward, 3 backward).
inline DensePolicy choose_dense_policy(const DeviceTraits& device, int64_t vectors, int tensors) {
  // One wave of 1 x 256 blocks moves one vector per resident thread.
  DenseForm form = vectors <= one_wave_threads(device) ? DenseForm::kTileOneVector
                                                       : DenseForm::kTileTwoVectors;
  if (cache_hint_for(device, vectors * kVectorBytes * tensors) == CacheHint::kStreaming ||
      !tile_offsets_fit(vectors, vectors_per_block(form))) {
    form = DenseForm::kStream;
  }
  return DensePolicy{form, blocks_for(vectors, vectors_per_block(form))};
}

// ---- Strided passes (strided.cuh): operands that are not one dense block each. Only the
// short-row threshold is measured; the other choices carry the dense pass's over or are
// reasoned from the hardware.

// A row kernel's block moves one tile of a row: one 16-byte unit per thread (a vector where
// every operand's row has stride 1, else as many elements). Blocks shrink to fit a short
// row, down to 64 threads: the smallest block that still fills an SM (32 resident blocks of
// 64 threads = 2048 threads on capabilities 8.0 and 9.0; 24 of 64 = 1536 on 8.9).
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
  int threads;            // per block
  int64_t blocks;         // the grid; the kernels loop when it covers less
  CacheHint hint;         // the row kernel's (the per-element kernel takes none)
  int64_t tiles_per_row;  // row kernel: blocks per row, each one 16-byte unit per thread of it
};

// A strided pass of fewer 16-byte vectors than one 256-thread block per SM takes 128-thread
// blocks, spreading its few blocks over twice the SMs: with 256 the views of a 256 KiB source
// (chunk, every other column, transposed chunk, permuted 3-D slice) took 1.03-1.09x the GPU
// time of the 128-thread launch on the H200, every dtype (benchmarks/studies/kernel_sharing.py).
constexpr int kStridedThreadsBelowOneWave = 128;

inline int strided_threads_for(const DeviceTraits& device, int64_t vectors) {
  return vectors < int64_t(device.sm_count) * kThreads ? kStridedThreadsBelowOneWave : kThreads;
}

// Whether rows of `row_length` elements go through the per-element kernel.
inline bool is_short_row(int64_t row_length, int element_bytes) {
  return row_length * element_bytes < kShortRowBytes;
}

// The row kernel's threads per block: the pass's (strided_threads_for), halved while half a
// block still covers the row, down to kMinRowThreads.
inline int row_threads_for(int pass_threads, int64_t row_length, int64_t elements_per_thread) {
  int threads = pass_threads;
  while (threads > kMinRowThreads && int64_t(threads / 2) * elements_per_thread >= row_length) {
    threads /= 2;
  }
  return threads;
}

// `numel` elements of `element_bytes`, in rows of `row_length` (a StridedLayout's sizes[0]),
// read and written by `tensors` tensors. The hint follows the dense pass's policy for the same
// number of bytes (footprint: the elements moved, not the span of the views). The
// per-element kernel takes no hint: it serves an uncommon layout, and one form keeps its
// kernels half as many.
inline StridedLaunchPolicy choose_strided_launch_policy(const DeviceTraits& device,
                                                        int64_t numel, int64_t row_length,
                                                        int element_bytes, int tensors) {
  const int64_t vectors = (numel * element_bytes + kVectorBytes - 1) / kVectorBytes;
  const int pass_threads = strided_threads_for(device, vectors);
  StridedLaunchPolicy policy{};
  policy.per_element = is_short_row(row_length, element_bytes);
  if (policy.per_element) {
    policy.threads = pass_threads;
    policy.blocks = blocks_for(numel, int64_t(pass_threads) * kScalarElementsInFlight);
    policy.hint = CacheHint::kDefault;
    return policy;
  }
  const int64_t elements_per_thread = kVectorBytes / element_bytes;
  policy.threads = row_threads_for(pass_threads, row_length, elements_per_thread);
  const int64_t tile_elements = int64_t(policy.threads) * elements_per_thread;
  policy.tiles_per_row = (row_length + tile_elements - 1) / tile_elements;
  // One block per tile, as the dense grid covers the tensor once; the kernel loops past
  // kMaxGridX.
  policy.blocks = blocks_for(numel / row_length * policy.tiles_per_row, 1);
  policy.hint = cache_hint_for(device, vectors * kVectorBytes * tensors);
  return policy;
}

}  // namespace relu_kernel
