// Layout planning: the one place where dimensions are ordered by stride. One sort,
// stride_order (TensorIterator's reorder_dimensions, which torch.empty_like's
// infer_dense_strides repeats for one tensor), serves all three questions the binding asks of
// a layout:
//   - is a tensor one dense block (is_dense: torch's is_non_overlapping_and_dense);
//   - how is a result laid out when x is not (dense_strides_like: torch.empty_like's rule,
//     and so the layout torch.relu(x) returns);
//   - how does a pass walk tensors that are not one dense block in one order, without a copy
//     (strided_layout: that order with size-1 dimensions dropped and neighbours merged where
//     every operand has them contiguous; relu-common/strided_layout.h).
// Plain C++ over sizes and strides, no torch type: tests/layout_plan_check.cpp runs it with the
// host's compiler against definitions of its own.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "relu-common/strided_layout.h"

namespace relu_binding {

// One value per dimension, inline up to kInlineDims (every tensor a model makes) so that the
// dense hot path allocates nothing; more on the heap.
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

// The `dim` dimensions (of sizes `sizes`) innermost first, ordered by the strides of
// `operands` tensors (strides[k]: operand k's; the first decides unless it is ambiguous). A
// stride of 0 (a broadcast) decides nothing; between equal strides the smaller size goes
// inside; otherwise dimensions keep their order, the last innermost. Inline, as the two
// below: every call of the ops asks is_dense of each tensor, and at small sizes the call
// path is the latency.
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
  // Insertion sort that steps over ambiguous pairs and stops at the first dimension that must
  // stay inside: the comparison is not a total order, so no library sort (which would also
  // allocate a buffer on every call).
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

// Some order of the dimensions is contiguous (dimensions of size 1 place nothing): torch's
// is_non_overlapping_and_dense. The order's ambiguous pairs are zero strides (a dense tensor
// has them on size-1 dimensions only) and equal strides of which one is on a size-1
// dimension: among the dimensions of size > 1 of a dense tensor, whose strides are distinct,
// the order is sorted. A zero stride on a dimension of size != 1 is never dense: a tensor
// with elements has none in a contiguous order anyway, and one without (a size-0 dimension
// zeroes the running product) keeps the answer of a sort by stride alone, which put it first.
inline bool is_dense(int64_t dim, const int64_t* sizes, const int64_t* strides) {
  int64_t expected = 1;
  for (const int64_t d : stride_order(dim, sizes, &strides, 1)) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected || strides[d] == 0) return false;
    expected *= sizes[d];
  }
  return true;
}

// The strides torch.empty_like gives a tensor that is not dense: dense, in its stride order
// (aten's infer_dense_strides).
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
