// Layout planning (layout_plan.h): the stride order and what is derived from it.
#include "torch-ext/layout_plan.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace relu_binding {

DimArray stride_order(int64_t dim, const int64_t* sizes, const int64_t* const* strides,
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

// The ambiguous pairs of the order are zero strides (which a dense tensor has on size-1
// dimensions only) and equal strides of which one is on a size-1 dimension: among the
// dimensions of size > 1 of a dense tensor, whose strides are distinct, the order is sorted.
// A zero stride on a dimension of size != 1 is never dense: a tensor with elements has none
// in a contiguous order anyway; one without (a size-0 dimension zeroes the running product)
// keeps the answer it always had, so that an empty result keeps its strides.
bool is_dense(int64_t dim, const int64_t* sizes, const int64_t* strides) {
  int64_t expected = 1;
  for (const int64_t d : stride_order(dim, sizes, &strides, 1)) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected || strides[d] == 0) return false;
    expected *= sizes[d];
  }
  return true;
}

// aten's infer_dense_strides, which empty_like applies to a tensor that is not dense.
DimArray dense_strides_like(int64_t dim, const int64_t* sizes, const int64_t* strides) {
  DimArray dense(dim);
  int64_t stride = 1;
  for (const int64_t d : stride_order(dim, sizes, &strides, 1)) {
    dense[d] = stride;
    if (sizes[d] > 1) stride *= sizes[d];
  }
  return dense;
}

std::optional<StridedLayout> strided_layout(int64_t dim, const int64_t* sizes,
                                            const int64_t* const* strides, int operands) {
  StridedLayout layout;
  int32_t dims = 0;
  for (const int64_t d : stride_order(dim, sizes, strides, operands)) {
    if (sizes[d] == 1) continue;
    if (dims > 0) {  // merge d into the dimension inside it where every operand allows
      const int32_t inner = dims - 1;
      bool contiguous = true;
      for (int k = 0; k < operands; ++k) {
        contiguous = contiguous && layout.sizes[inner] * layout.strides[k][inner] == strides[k][d];
      }
      if (contiguous) {
        layout.sizes[inner] *= sizes[d];
        continue;
      }
    }
    if (dims == StridedLayout::kMaxDims) return std::nullopt;
    layout.sizes[dims] = sizes[d];
    for (int k = 0; k < operands; ++k) layout.strides[k][dims] = strides[k][d];
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
