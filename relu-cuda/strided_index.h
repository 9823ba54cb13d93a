// The integer arithmetic that turns a row number or a linear element index of a strided pass
// into each operand's element offset (StridedLayout: dimension 0 innermost). Plain C++ with
// __host__ __device__ functions, so tests/strided_index_check.cpp runs the same arithmetic on
// the host. Each digit of the mixed-radix index costs a division, the price of a strided pass:
// the kernels pay it once per row where they can, and per element only for short rows, where a
// 32-bit multiply-shift divider makes each three instructions.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "relu-common/relu_element.h"  // RELU_HOST_DEVICE
#include "relu-common/strided_layout.h"

// Loop pragmas for the device pass only: the host compiler warns on them.
#if defined(__CUDA_ARCH__)
#define RELU_PRAGMA(x) _Pragma(#x)
#else
#define RELU_PRAGMA(x)
#endif

namespace relu_kernel {

// n / divisor for n < 2^31 and 1 <= divisor <= 2^31 as a multiply-high, an add and a shift
// (Granlund and Montgomery, as TensorIterator's IntDivider).
struct FastDivider32 {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;

  static FastDivider32 of(uint64_t divisor) {
    if (divisor < 1 || divisor > (uint64_t(1) << 31)) {
      throw std::logic_error("relu: FastDivider32 needs a divisor in [1, 2^31]");
    }
    FastDivider32 d;
    d.divisor = uint32_t(divisor);
    while ((uint64_t(1) << d.shift) < divisor) ++d.shift;
    d.magic = uint32_t((uint64_t(1) << 32) * ((uint64_t(1) << d.shift) - divisor) / divisor + 1);
    return d;
  }

  RELU_HOST_DEVICE uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, magic);
#else
    const uint32_t high = uint32_t((uint64_t(n) * magic) >> 32);
#endif
    return (high + n) >> shift;  // high <= n < 2^31: the sum does not wrap
  }
};

// n / divisor for any 64-bit n, through the far cheaper 32-bit division when both fit.
struct Divider64 {
  uint64_t divisor = 1;

  static Divider64 of(uint64_t divisor) { return Divider64{divisor}; }

  RELU_HOST_DEVICE uint64_t divide(uint64_t n) const {
    if (((n | divisor) >> 32) == 0) return uint32_t(n) / uint32_t(divisor);
    return n / divisor;
  }
};

// The walk as a kernel parameter (at most 1008 bytes), in 32-bit integers with the fast divider
// where every index and offset fits (fits_index32), else 64-bit.
template <typename Index, int kOperands>
struct IndexWalk {
  static_assert(std::is_same<Index, uint32_t>::value || std::is_same<Index, uint64_t>::value,
                "a walk indexes in 32 or 64 bits");
  using Divider = typename std::conditional<sizeof(Index) == 4, FastDivider32, Divider64>::type;
  static constexpr int kMaxDims = StridedLayout::kMaxDims;

  int32_t dims = 0;
  Divider sizes[kMaxDims];
  Index strides[kOperands][kMaxDims] = {};
};

inline void require_valid_layout(const StridedLayout& layout) {
  if (layout.dims < 1 || layout.dims > StridedLayout::kMaxDims) {
    throw std::logic_error("relu: a strided layout has 1 to 25 dimensions");
  }
  for (int32_t d = 0; d < layout.dims; ++d) {
    if (layout.sizes[d] < 0) throw std::logic_error("relu: negative size in a strided layout");
    for (int k = 0; k < StridedLayout::kMaxOperands; ++k) {
      if (layout.strides[k][d] < 0) throw std::logic_error("relu: negative stride in a strided layout");
    }
  }
}

// Whether every linear index (numel < 2^31, the fast divider's domain) and every element
// offset of the first kOperands operands (< 2^32) fits 32 bits.
inline bool fits_index32(const StridedLayout& layout, int operands) {
  constexpr uint64_t kMaxIndex = (uint64_t(1) << 31) - 1;
  constexpr uint64_t kMaxOffset = (uint64_t(1) << 32) - 1;
  if (uint64_t(layout.numel()) > kMaxIndex) return false;
  for (int k = 0; k < operands; ++k) {
    uint64_t last = 0;  // offset of the pass's last element: the largest, strides are >= 0
    for (int32_t d = 0; d < layout.dims; ++d) {
      const uint64_t stride = uint64_t(layout.strides[k][d]);
      const uint64_t digit = uint64_t(layout.sizes[d] - 1);
      if (digit != 0 && stride > (kMaxOffset - last) / digit) return false;
      last += digit * stride;
    }
  }
  return true;
}

template <typename Index, int kOperands>
IndexWalk<Index, kOperands> make_index_walk(const StridedLayout& layout) {
  static_assert(kOperands <= StridedLayout::kMaxOperands, "more operands than a layout has");
  IndexWalk<Index, kOperands> walk;
  walk.dims = layout.dims;
  for (int32_t d = 0; d < layout.dims; ++d) {
    walk.sizes[d] = IndexWalk<Index, kOperands>::Divider::of(uint64_t(layout.sizes[d]));
    for (int k = 0; k < kOperands; ++k) walk.strides[k][d] = Index(layout.strides[k][d]);
  }
  return walk;
}

// Adds to offsets[k][c] what dimensions first_dim and up contribute to operand k's offset for
// index[c] (first_dim 0: an element index; 1: a row number), consuming index[]. kCount indices
// share each dimension, so a thread's divisions are in flight together. The dimension loop stays
// rolled: unrolling costs registers, and the walk is read from the parameter bank either way.
template <int kCount, typename Index, int kOperands>
RELU_HOST_DEVICE void add_offsets(const IndexWalk<Index, kOperands>& walk, int32_t first_dim,
                                  Index (&index)[kCount], Index (&offsets)[kOperands][kCount]) {
  const int32_t last_dim = walk.dims - 1;
  RELU_PRAGMA(unroll 1)
  for (int32_t d = first_dim; d < last_dim; ++d) {
    const typename IndexWalk<Index, kOperands>::Divider size = walk.sizes[d];
    Index digit[kCount];
RELU_PRAGMA(unroll)
    for (int c = 0; c < kCount; ++c) {
      const Index quotient = Index(size.divide(index[c]));
      digit[c] = index[c] - quotient * Index(size.divisor);
      index[c] = quotient;
    }
RELU_PRAGMA(unroll)
    for (int k = 0; k < kOperands; ++k) {
      const Index stride = walk.strides[k][d];
RELU_PRAGMA(unroll)
      for (int c = 0; c < kCount; ++c) offsets[k][c] += digit[c] * stride;
    }
  }
  if (first_dim <= last_dim) {  // the outermost digit is what is left: no division
RELU_PRAGMA(unroll)
    for (int k = 0; k < kOperands; ++k) {
      const Index stride = walk.strides[k][last_dim];
RELU_PRAGMA(unroll)
      for (int c = 0; c < kCount; ++c) offsets[k][c] += index[c] * stride;
    }
  }
}

// Operand k's element offset of the first element of row `row` (dimensions 1 and up).
template <typename Index, int kOperands>
RELU_HOST_DEVICE void row_offsets(const IndexWalk<Index, kOperands>& walk, Index row,
                                  Index (&offsets)[kOperands]) {
  Index index[1] = {row};
  Index per_dim[kOperands][1] = {};
  add_offsets<1>(walk, 1, index, per_dim);
RELU_PRAGMA(unroll)
  for (int k = 0; k < kOperands; ++k) offsets[k] = per_dim[k][0];
}

// A row kernel's work item: tile `tile` of row `row`, one division per block.
struct RowTile {
  uint64_t row;
  uint64_t tile;
};

RELU_HOST_DEVICE RowTile row_tile_of(uint64_t item, const Divider64& tiles_per_row) {
  const uint64_t row = tiles_per_row.divide(item);
  return RowTile{row, item - row * tiles_per_row.divisor};
}

}  // namespace relu_kernel

#undef RELU_PRAGMA
