// How the CUDA kernels are launched: one function per pass decides the dense kernel's form and
// grid, or a strided pass's kernel, threads, hint and tiles per row, from the device's
// properties and the pass's size. The measured constants are in tuning.h.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "relu-cuda/cuda_check.h"
#include "relu-cuda/memory.cuh"
#include "relu-cuda/tuning.h"

namespace relu_kernel {

// What the policy reads from a device.
struct DeviceTraits {
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int max_threads_per_sm = 0;  // resident threads per SM
};

// Queried once per process, so a call costs no driver query; a function-local static, not
// std::call_once, which would tie the binary to pthread_once@GLIBC_2.34.
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

// A grid that covers the work once (persistent grids were slower), capped at kMaxGridX: the
// kernels loop past it.
inline int64_t blocks_for(int64_t units, int64_t units_per_block) {
  const int64_t blocks = (units + units_per_block - 1) / units_per_block;
  if (blocks < 1) return 1;  // the block that writes the head and tail
  return blocks < kMaxGridX ? blocks : kMaxGridX;
}

// Streaming hints once the pass's footprint no longer leaves its output in the L2 for a consumer.
inline CacheHint cache_hint_for(const DeviceTraits& device, int64_t footprint_bytes) {
  const bool streaming = footprint_bytes * tuning::kStreamingFootprintL2Denominator >=
                         device.l2_bytes * tuning::kStreamingFootprintL2Numerator;
  return streaming ? CacheHint::kStreaming : CacheHint::kDefault;
}

// ---- The dense pass (relu_cuda.cu): a form is its vectors per thread, threads per block,
// whether it loops (a grid-stride loop with 64-bit offsets) or moves one tile per block (32-bit
// offsets, each vector predicated on its bound), and its cache hint. The tiles serve a pass that
// stays in the L2, one vector per thread while the grid fits one wave, else two (a wave then
// holds twice the bytes); kStream serves the rest. A new form is an enumerator, its traits and a case below.
enum class DenseForm : uint8_t { kTileOneVector, kTileTwoVectors, kStream };

template <int kVectorsPerThread, int kThreadsPerBlock, bool kLoopsOverGrid, CacheHint kCacheHint>
struct DenseFormShape {
  static constexpr int kVectors = kVectorsPerThread;
  static constexpr int kThreads = kThreadsPerBlock;
  static constexpr bool kLoops = kLoopsOverGrid;
  static constexpr CacheHint kHint = kCacheHint;
};

template <DenseForm kForm>
struct DenseFormTraits;
template <>
struct DenseFormTraits<DenseForm::kTileOneVector>
    : DenseFormShape<1, tuning::kTileOneVectorThreads, false, CacheHint::kDefault> {};
template <>
struct DenseFormTraits<DenseForm::kTileTwoVectors>
    : DenseFormShape<2, tuning::kTileTwoVectorsThreads, false, CacheHint::kDefault> {};
template <>
struct DenseFormTraits<DenseForm::kStream>
    : DenseFormShape<tuning::kStreamVectorsPerThread, tuning::kBlockThreads, true,
                     CacheHint::kStreaming> {};

// A launcher instantiates its kernel for every form here, as visit_cache_hint.
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

// Whether a tile form's 32-bit offsets reach every vector of its grid, one tile past the end
// included.
inline bool tile_offsets_fit(int64_t vectors, int64_t vectors_per_block) {
  return vectors <= int64_t(INT32_MAX) - 2 * vectors_per_block;
}

// `vectors` whole 16-byte vectors over `tensors` tensors read and written.
inline DensePolicy choose_dense_policy(const DeviceTraits& device, int64_t vectors, int tensors) {
  DenseForm form = vectors <= one_wave_threads(device) ? DenseForm::kTileOneVector
                                                       : DenseForm::kTileTwoVectors;
  if (cache_hint_for(device, vectors * kVectorBytes * tensors) == CacheHint::kStreaming ||
      !tile_offsets_fit(vectors, vectors_per_block(form))) {
    form = DenseForm::kStream;
  }
  return DensePolicy{form, blocks_for(vectors, vectors_per_block(form))};
}

// ---- Strided passes (strided.cuh). A row kernel's block moves one tile of a row, one 16-byte
// unit per thread; blocks shrink to fit a short row down to tuning::kMinRowThreads, and rows
// under tuning::kShortRowBytes go one element per thread instead.
struct StridedLaunchPolicy {
  bool per_element;       // the per-element kernel, else the row kernel
  int threads;            // per block
  int64_t blocks;         // the grid; the kernels loop when it covers less
  CacheHint hint;         // the row kernel's (the per-element kernel takes none)
  int64_t tiles_per_row;  // row kernel: blocks per row
};

// Smaller blocks for a pass of less than one full block per SM: its few blocks reach more SMs.
inline int strided_threads_for(const DeviceTraits& device, int64_t vectors) {
  return vectors < int64_t(device.sm_count) * tuning::kBlockThreads
             ? tuning::kStridedThreadsBelowOneWave
             : tuning::kBlockThreads;
}

inline bool is_short_row(int64_t row_length, int element_bytes) {
  return row_length * element_bytes < tuning::kShortRowBytes;
}

// The pass's threads, halved while half a block still covers the row.
inline int row_threads_for(int pass_threads, int64_t row_length, int64_t elements_per_thread) {
  int threads = pass_threads;
  while (threads > tuning::kMinRowThreads &&
         int64_t(threads / 2) * elements_per_thread >= row_length) {
    threads /= 2;
  }
  return threads;
}

// `numel` elements in rows of `row_length`, over `tensors` tensors. The hint follows the dense
// pass's for the bytes moved; the per-element kernel takes none (an uncommon layout: one form
// keeps its kernels half as many).
inline StridedLaunchPolicy choose_strided_launch_policy(const DeviceTraits& device,
                                                        int64_t numel, int64_t row_length,
                                                        int element_bytes, int tensors) {
  const int64_t vectors = (numel * element_bytes + kVectorBytes - 1) / kVectorBytes;
  const int pass_threads = strided_threads_for(device, vectors);
  StridedLaunchPolicy policy{};
  policy.per_element = is_short_row(row_length, element_bytes);
  if (policy.per_element) {
    policy.threads = pass_threads;
    policy.blocks = blocks_for(numel, int64_t(pass_threads) * tuning::kScalarElementsInFlight);
    policy.hint = CacheHint::kDefault;
    return policy;
  }
  const int64_t elements_per_thread = kVectorBytes / element_bytes;
  policy.threads = row_threads_for(pass_threads, row_length, elements_per_thread);
  const int64_t tile_elements = int64_t(policy.threads) * elements_per_thread;
  policy.tiles_per_row = (row_length + tile_elements - 1) / tile_elements;
  policy.blocks = blocks_for(numel / row_length * policy.tiles_per_row, 1);
  policy.hint = cache_hint_for(device, vectors * kVectorBytes * tensors);
  return policy;
}

}  // namespace relu_kernel
