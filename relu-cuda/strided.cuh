// CUDA backend, strided passes: relu_strided_cuda, relu_backward_strided_cuda and the gated
// ops' (relu-common/backend_entry_points.h) over operands that are not one dense block each (a
// chunk x[:, :n], x[:, ::2], a transposed slice, a permute, out= of another layout), without
// a copy.
//
// Read this first. TensorIterator (torch.relu on such views) finds each element's offsets
// from its linear index, one division per dimension per element, and moves one element per
// access. Here a row, the layout's dimension 0, is the unit instead:
//   - row kernel (rows of at least 2 KiB): a block per tile of one row. One division per
//     block finds the row, a loop over the outer dimensions its offsets (strided_index.h);
//     inside the row, offsets are i * stride. Then, row by row (a chunk's rows can start at
//     different misalignments):
//       * every operand has stride 1 along the row: the dense pass's 16-byte vectors on the
//         out row's 16-byte grid, the head and tail elements by the first threads of the
//         row's tile 0; an input row whose start differs from out's modulo 16 (x[:, 1:] into
//         a fresh, aligned output) is read as shifted granules, as in the dense pass
//         (memory.cuh, ShiftedVectors);
//       * otherwise (x[:, ::2], x[..., 1::3]): each thread moves 16 bytes' worth of
//         elements, loading all before storing any. Each warp access is as coalesced as the
//         stride allows.
//   - per-element kernel (shorter rows, such as a permute whose inner run is short): tiles of
//     a row would leave most threads idle, so each thread takes 4 elements of the whole pass
//     and finds their offsets from their linear indices, with 3-instruction divisions where
//     the pass fits 32-bit indices.
// Each kernel exists once per op (relu_ops.cuh says which op each dtype's passes run: their
// own for the common dtypes, one per element size for the rarer ones). The launch
// decisions (which kernel, block size, tiles, hints) are choose_strided_launch_policy in
// launch_policy.h. As the dense pass: the current stream of the device, under a device
// guard, no allocation and no host synchronisation (capturable in a CUDA graph). Out may be
// the input itself with the same strides: every element is read and written by one thread,
// its loads before its store.
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

// A pass's pointers (each at its tensor's first element) and its walk in Index-bit integers.
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

// Tile `tile` of one row of `length` elements whose operands all have stride 1: one 16-byte
// vector per thread on out's grid, plus the row's head and tail elements in its tile 0.
// kShifted: some input row starts at another misalignment modulo 16 than out's.
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

// Tile `tile` of a row with a stride other than 1: 16 bytes' worth of elements per thread at
// element strides `strides` (out's first, then the inputs'), all loaded before any is stored.
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
// operand has stride 1 along the rows, so every row goes through vectors.
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

// kScalarElementsInFlight elements of the pass per thread and loop trip, each element's
// offsets from its linear index, all loaded before any is stored.
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
      index[j] = valid[j] ? Index(n) : Index(0);  // past the end: any index in range will do
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

// The row kernel for the policy's threads, grid and hint.
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

// `op` over `layout` (its strides in elements of op's Storage, the dtype's size). The caller
// holds the device scope and has checked that every operand is element-aligned.
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
