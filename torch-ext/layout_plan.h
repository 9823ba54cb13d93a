// Layout planning: how a pass walks tensors of any layouts without a copy, as TensorIterator
// does. The dimension order comes from the operands' strides, and the StridedLayout
// (relu-common/strided_layout.h) is that order with size-1 dimensions dropped and contiguous
// neighbours merged. Only passes whose tensors are not one dense block in one order get here.
#pragma once

#include <optional>

#include "relu-common/strided_layout.h"
#include "torch-ext/tensor_geometry.h"

namespace relu_binding {

// The walk over `operands` (the output first), ordered by their strides in that priority.
// nullopt when more than StridedLayout::kMaxDims dimensions remain after merging.
std::optional<StridedLayout> strided_layout(const Geometry* const* operands, int count);

}  // namespace relu_binding
