// Layout planning (layout_plan.h): the walk over any layout.
#include "torch-ext/layout_plan.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace relu_binding {

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
