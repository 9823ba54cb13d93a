// Layout planning (layout_plan.h): the dimension order and the merged StridedLayout.
#include "torch-ext/layout_plan.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace relu_binding {

namespace {

// Dimensions innermost first, ordered by the strides of `operands` (the first one decides
// unless it is ambiguous): TensorIterator's reorder_dimensions. A stride of 0 (a broadcast)
// decides nothing; between equal strides the smaller size goes inside.
void stride_order(const Geometry* const* operands, int count, std::vector<int64_t>& order) {
  const Geometry& shape = *operands[0];
  order.resize(size_t(shape.dim));
  for (int64_t i = 0; i < shape.dim; ++i) order[size_t(i)] = shape.dim - 1 - i;
  const auto should_swap = [&](int64_t d0, int64_t d1) {
    for (int k = 0; k < count; ++k) {
      const int64_t s0 = operands[k]->strides[d0], s1 = operands[k]->strides[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape.sizes[d0] > shape.sizes[d1]) return 1;
    }
    return 0;
  };
  // Insertion sort that stops at the first "keep": the comparison is not a total order.
  for (int64_t i = 1; i < shape.dim; ++i) {
    for (int64_t d1 = i, d0 = i - 1; d0 >= 0; --d0) {
      const int comparison = should_swap(order[size_t(d0)], order[size_t(d1)]);
      if (comparison < 0) break;
      if (comparison > 0) {
        std::swap(order[size_t(d0)], order[size_t(d1)]);
        d1 = d0;
      }
    }
  }
}

}  // namespace

std::optional<StridedLayout> strided_layout(const Geometry* const* operands, int count) {
  std::vector<int64_t> order;
  stride_order(operands, count, order);
  const Geometry& shape = *operands[0];
  StridedLayout layout;
  int32_t dims = 0;
  for (const int64_t d : order) {
    if (shape.sizes[d] == 1) continue;
    if (dims > 0) {  // merge d into the dimension inside it where every operand allows
      const int32_t inner = dims - 1;
      bool contiguous = true;
      for (int k = 0; k < count; ++k) {
        contiguous = contiguous &&
                     layout.sizes[inner] * layout.strides[k][inner] == operands[k]->strides[d];
      }
      if (contiguous) {
        layout.sizes[inner] *= shape.sizes[d];
        continue;
      }
    }
    if (dims == StridedLayout::kMaxDims) return std::nullopt;
    layout.sizes[dims] = shape.sizes[d];
    for (int k = 0; k < count; ++k) layout.strides[k][dims] = operands[k]->strides[d];
    ++dims;
  }
  if (dims == 0) {  // one element
    layout.sizes[0] = 1;
    dims = 1;
  }
  layout.dims = dims;
  return layout;
}

}  // namespace relu_binding
