// CUDA backend, strided passes: operands that are not one dense block each (a chunk, a step, a
// transpose, a permute, out= of another layout), without a copy. The unit is a row (the layout's
// dimension 0), so offsets cost one division walk per block, not per element:
//   - row kernel: a block per tile of one row; where every operand has stride 1 along it, the
//     dense pass's 16-byte vectors on the out row's grid, else 16 bytes' worth of elements per
//     thread, loaded before any is stored;
//   - per-element kernel, for short rows, whose tiles would leave most threads idle: elements
//     of the whole pass per thread, each offset from its linear index (strided_index.h).
// In place with the same strides is safe: each element is read and written by one thread.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "relu-common/strided_layout.h"
#include "relu-cuda/cuda_check.h"
#include "relu-cuda/launch_policy.h"
#include "relu-cuda/memory.cuh"
#include "relu-cuda/relu_ops.cuh"
#include "relu-cuda/strided_index.h"

namespace relu_kernel {

// Operand 0 of the walk is out, operand 1 + k is in[k].
template <typename Storage, int kInputs, typename Index>
struct StridedOperands {
  const Storage* in[kInputs];
  Storage* out;
  IndexWalk<Index, kInputs + 1> walk;
};

struct RowTiling {
  Divider64 tiles_per_row;
  uint64_t items;  // rows * tiles_per_row
};

// Tile `tile` of a row whose operands all have stride 1; the row's tile 0 also takes its head and
// tail. kShifted: some input row's misalignment differs from out's.
template <typename Op, CacheHint kHint, bool kShifted>
__device__ __forceinline__ void row_tile_vector16(
    const Op& op, const typename Op::Storage* const (&in)[Op::kInputs], typename Op::Storage* out,
    int64_t length, uint64_t tile) {
  constexpr int kInputs = Op::kInputs;
  const VectorSplit split =
      split_for_vectors(length, misalignment16(out), int(sizeof(typename Op::Storage)));
  if (tile == 0) {  // edge_element's rule as a loop over the block
    for (int64_t t = threadIdx.x; t < split.head + split.tail; t += blockDim.x) {
      const int64_t i = t < split.head ? t : split.tail_start + (t - split.head);
      out[i] = value_at(op, in, i);
    }
  }
  const InputVectors<kInputs, int(sizeof(typename Op::Storage)), kShifted> in_vectors(in,
                                                                                    split.head);
  Vector16<uint32_t>* out_vectors = reinterpret_cast<Vector16<uint32_t>*>(out + split.head);
  const int64_t threads = blockDim.x;
  const int64_t i = int64_t(tile) * threads + threadIdx.x;
  Vector16<uint32_t> v[kInputs];
  if (i < split.vectors) {
#pragma unroll
    for (int k = 0; k < kInputs; ++k) v[k] = in_vectors.template load<kHint>(k, i);
  }
  if (i < split.vectors) store_vector16<kHint>(out_vectors + i, op.vector(v));
}

// Tile `tile` of a row with a stride other than 1; `strides` are out's, then the inputs'.
template <typename Op, CacheHint kHint>
__device__ __forceinline__ void row_tile_elements(
    const Op& op, const typename Op::Storage* const (&in)[Op::kInputs], typename Op::Storage* out,
    const int64_t (&strides)[Op::kInputs + 1], int64_t length, uint64_t tile) {
  constexpr int kInputs = Op::kInputs;
  constexpr int kElements = int(kVectorBytes / sizeof(typename Op::Storage));
  const int64_t threads = blockDim.x;
  const int64_t first = int64_t(tile) * threads * kElements + threadIdx.x;
  typename Op::Storage x[kElements][kInputs];
#pragma unroll
  for (int j = 0; j < kElements; ++j) {
    const int64_t i = first + j * threads;
    if (i < length) {
#pragma unroll
      for (int k = 0; k < kInputs; ++k) x[j][k] = load_element<kHint>(in[k] + i * strides[1 + k]);
    }
  }
#pragma unroll
  for (int j = 0; j < kElements; ++j) {
    const int64_t i = first + j * threads;
    if (i < length) store_element<kHint>(out + i * strides[0], op.value(x[j]));
  }
}

// One block per (row, tile) work item, looping when the grid is capped. kUnitStrides: every
// operand has stride 1 along the rows.
template <typename Op, bool kUnitStrides, CacheHint kHint>
__global__ void strided_rows(StridedOperands<typename Op::Storage, Op::kInputs, uint64_t> pass,
                             RowTiling tiling, Op op) {
  using Storage = typename Op::Storage;
  constexpr int kInputs = Op::kInputs;
  constexpr int kOperands = kInputs + 1;
  const int64_t length = int64_t(pass.walk.sizes[0].divisor);
  int64_t inner_strides[kOperands];
#pragma unroll
  for (int k = 0; k < kOperands; ++k) inner_strides[k] = int64_t(pass.walk.strides[k][0]);

  for (uint64_t item = blockIdx.x; item < tiling.items; item += gridDim.x) {
    const RowTile at = row_tile_of(item, tiling.tiles_per_row);
    uint64_t offsets[kOperands];
    row_offsets(pass.walk, at.row, offsets);
    Storage* out = pass.out + offsets[0];
    const Storage* in[kInputs];
    bool aligned_alike = true;
#pragma unroll
    for (int k = 0; k < kInputs; ++k) {
      in[k] = pass.in[k] + offsets[1 + k];
      aligned_alike = aligned_alike && misalignment16(in[k]) == misalignment16(out);
    }
    if constexpr (kUnitStrides) {
      if (aligned_alike) {
        row_tile_vector16<Op, kHint, false>(op, in, out, length, at.tile);
      } else {
        row_tile_vector16<Op, kHint, true>(op, in, out, length, at.tile);
      }
    } else {
      row_tile_elements<Op, kHint>(op, in, out, inner_strides, length, at.tile);
    }
  }
}

// Elements of the whole pass, each thread's loaded together before any is stored.
template <typename Op, typename Index>
__global__ void strided_elements(StridedOperands<typename Op::Storage, Op::kInputs, Index> pass,
                                 uint64_t numel, Op op) {
  constexpr int kInputs = Op::kInputs;
  constexpr int kOperands = kInputs + 1;
  constexpr int kElements = tuning::kScalarElementsInFlight;
  const uint64_t threads = blockDim.x;
  const uint64_t tile = threads * kElements;
  for (uint64_t base = blockIdx.x * tile; base < numel; base += gridDim.x * tile) {
    Index index[kElements];
    bool valid[kElements];
#pragma unroll
    for (int j = 0; j < kElements; ++j) {
      const uint64_t n = base + threadIdx.x + j * threads;
      valid[j] = n < numel;
      index[j] = valid[j] ? Index(n) : Index(0);  // any index in range: its result is not stored
    }
    Index offsets[kOperands][kElements] = {};
    add_offsets<kElements>(pass.walk, 0, index, offsets);
    typename Op::Storage x[kElements][kInputs];
#pragma unroll
    for (int j = 0; j < kElements; ++j) {
      if (valid[j]) {
#pragma unroll
        for (int k = 0; k < kInputs; ++k) x[j][k] = pass.in[k][offsets[1 + k][j]];
      }
    }
#pragma unroll
    for (int j = 0; j < kElements; ++j) {
      if (valid[j]) pass.out[offsets[0][j]] = op.value(x[j]);
    }
  }
}

template <typename Op, typename Index>
StridedOperands<typename Op::Storage, Op::kInputs, Index> strided_operands_of(
    const Operands<typename Op::Storage, Op::kInputs>& pass, const StridedLayout& layout) {
  StridedOperands<typename Op::Storage, Op::kInputs, Index> strided{};
  for (int k = 0; k < Op::kInputs; ++k) strided.in[k] = pass.in[k];
  strided.out = pass.out;
  strided.walk = make_index_walk<Index, Op::kInputs + 1>(layout);
  return strided;
}

template <typename Op>
void launch_strided_rows(const Op& op,
                         const StridedOperands<typename Op::Storage, Op::kInputs, uint64_t>& pass,
                         const RowTiling& tiling, bool unit_inner_strides,
                         const StridedLaunchPolicy& policy, cudaStream_t stream) {
  const dim3 grid(unsigned(policy.blocks)), block(unsigned(policy.threads));
  visit_cache_hint(policy.hint, [&](auto hint) {
    constexpr CacheHint kHint = decltype(hint)::value;
    if (unit_inner_strides) {
      strided_rows<Op, true, kHint><<<grid, block, 0, stream>>>(pass, tiling, op);
    } else {
      strided_rows<Op, false, kHint><<<grid, block, 0, stream>>>(pass, tiling, op);
    }
  });
  check_cuda(cudaGetLastError());
}

template <typename Op, typename Index>
void launch_strided_elements(const Op& op, const Operands<typename Op::Storage, Op::kInputs>& pass,
                             const StridedLayout& layout, const StridedLaunchPolicy& policy,
                             cudaStream_t stream) {
  strided_elements<Op, Index><<<unsigned(policy.blocks), unsigned(policy.threads), 0, stream>>>(
      strided_operands_of<Op, Index>(pass, layout), uint64_t(pass.n), op);
  check_cuda(cudaGetLastError());
}

// `op` over `layout` (strides in elements). The caller holds the device scope and has checked
// that every operand is element-aligned.
template <typename Op>
void run_strided_pass(const Op& op, const void* const (&in)[Op::kInputs], void* out,
                      const StridedLayout& layout, int32_t device) {
  using Storage = typename Op::Storage;
  constexpr int kOperands = Op::kInputs + 1;
  constexpr int kElementBytes = int(sizeof(Storage));
  require_valid_layout(layout);
  Operands<Storage, Op::kInputs> pass{};
  for (int k = 0; k < Op::kInputs; ++k) pass.in[k] = static_cast<const Storage*>(in[k]);
  pass.out = static_cast<Storage*>(out);
  pass.n = layout.numel();
  if (pass.n == 0) return;
  const DeviceTraits& traits = device_traits(device);
  const cudaStream_t stream = current_cuda_stream(device);
  const int64_t length = layout.sizes[0];
  const StridedLaunchPolicy policy =
      choose_strided_launch_policy(traits, pass.n, length, kElementBytes, kOperands);
  if (policy.per_element) {
    if (fits_index32(layout, kOperands)) {
      launch_strided_elements<Op, uint32_t>(op, pass, layout, policy, stream);
    } else {
      launch_strided_elements<Op, uint64_t>(op, pass, layout, policy, stream);
    }
    return;
  }
  const auto strided = strided_operands_of<Op, uint64_t>(pass, layout);
  const RowTiling tiling{Divider64::of(uint64_t(policy.tiles_per_row)),
                         uint64_t(pass.n / length) * uint64_t(policy.tiles_per_row)};
  bool unit_inner_strides = true;
  for (int k = 0; k < kOperands; ++k) {
    unit_inner_strides = unit_inner_strides && layout.strides[k][0] == 1;
  }
  launch_strided_rows<Op>(op, strided, tiling, unit_inner_strides, policy, stream);
}

}  // namespace relu_kernel
