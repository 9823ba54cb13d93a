// The one place where dimensions are ordered by stride (TensorIterator's reorder_dimensions),
// answering: is a tensor dense (is_dense), how is a result of a non-dense x laid out
// (dense_strides_like), how does a pass walk any layout with no copy (strided_layout). No
// torch type: tests/layout_plan_check.cpp runs it on the host.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "relu-common/strided_layout.h"

namespace relu_binding {

// Inline up to kInlineDims, so that the dense hot path allocates nothing.
class DimArray {
 public:
  static constexpr int64_t kInlineDims = 16;

  explicit DimArray(int64_t size) : size_(size) {
    if (size > kInlineDims) heap_.resize(size_t(size));
  }
  int64_t size() const { return size_; }
  int64_t* data() { return size_ > kInlineDims ? heap_.data() : inline_.data(); }
  const int64_t* data() const { return size_ > kInlineDims ? heap_.data() : inline_.data(); }
  int64_t& operator[](int64_t i) { return data()[i]; }
  int64_t operator[](int64_t i) const { return data()[i]; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }

 private:
  int64_t size_;
  std::array<int64_t, kInlineDims> inline_;
  std::vector<int64_t> heap_;
};

// Dimensions innermost first by the operands' strides, the first operand deciding unless
// ambiguous; a 0 stride decides nothing, equal strides put the smaller size inside, else the
// order stays. Inline: every op call asks is_dense, and small calls are all call path.
inline DimArray stride_order(int64_t dim, const int64_t* sizes, const int64_t* const* strides,
                             int operands) {
  DimArray order(dim);
  for (int64_t i = 0; i < dim; ++i) order[i] = dim - 1 - i;
  // 1: d0 goes outside d1; -1: inside; 0: ambiguous (the next operand decides, else neither).
  const auto should_swap = [&](int64_t d0, int64_t d1) {
    for (int k = 0; k < operands; ++k) {
      const int64_t s0 = strides[k][d0], s1 = strides[k][d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (sizes[d0] > sizes[d1]) return 1;
    }
    return 0;
  };
  // Not a total order, so no library sort: an insertion sort that steps over ambiguous pairs.
  for (int64_t i = 1; i < dim; ++i) {
    for (int64_t d1 = i, d0 = i - 1; d0 >= 0; --d0) {
      const int comparison = should_swap(order[d0], order[d1]);
      if (comparison < 0) break;
      if (comparison > 0) {
        std::swap(order[d0], order[d1]);
        d1 = d0;
      }
    }
  }
  return order;
}

// torch's is_non_overlapping_and_dense: the stride order is contiguous. A dense tensor's
// dimensions of size > 1 have distinct strides, so the order's ambiguity cannot hide one.
inline bool is_dense(int64_t dim, const int64_t* sizes, const int64_t* strides) {
  int64_t expected = 1;
  for (const int64_t d : stride_order(dim, sizes, &strides, 1)) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected || strides[d] == 0) return false;
    expected *= sizes[d];
  }
  return true;
}

// aten's infer_dense_strides: dense, in the tensor's stride order.
inline DimArray dense_strides_like(int64_t dim, const int64_t* sizes, const int64_t* strides) {
  DimArray dense(dim);
  int64_t stride = 1;
  for (const int64_t d : stride_order(dim, sizes, &strides, 1)) {
    dense[d] = stride;
    if (sizes[d] > 1) stride *= sizes[d];
  }
  return dense;
}

// The walk over `operands` tensors of one shape (strides[0]: the output's, then the inputs'),
// ordered by their strides in that priority. nullopt when more than StridedLayout::kMaxDims
// dimensions remain after merging.
std::optional<StridedLayout> strided_layout(int64_t dim, const int64_t* sizes,
                                            const int64_t* const* strides, int operands);

}  // namespace relu_binding
