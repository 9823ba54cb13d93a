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
// inside; otherwise dimensions keep their order, the last innermost.
DimArray stride_order(int64_t dim, const int64_t* sizes, const int64_t* const* strides,
                      int operands);

// Some order of the dimensions is contiguous (dimensions of size 1 place nothing).
bool is_dense(int64_t dim, const int64_t* sizes, const int64_t* strides);

// The strides torch.empty_like gives a tensor that is not dense: dense, in its stride order.
DimArray dense_strides_like(int64_t dim, const int64_t* sizes, const int64_t* strides);

// The walk over `operands` tensors of one shape (strides[0]: the output's, then the inputs'),
// ordered by their strides in that priority. nullopt when more than StridedLayout::kMaxDims
// dimensions remain after merging.
std::optional<StridedLayout> strided_layout(int64_t dim, const int64_t* sizes,
                                            const int64_t* const* strides, int operands);

}  // namespace relu_binding
