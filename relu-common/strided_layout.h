// Any layout with no copy: the walk of a pass whose operands are not one dense block each,
// planned by the binding (torch-ext/layout_plan.h) as TensorIterator plans one. Dimension 0
// is the row; a row of unit strides takes the dense vector loop. No torch type, so every
// backend and host test can include it.
#pragma once

#include <cstdint>

struct StridedLayout {
  static constexpr int kMaxDims = 25;     // torch's TensorIterator limit on CUDA
  static constexpr int kMaxOperands = 4;  // the output and up to three inputs
  int32_t dims = 0;
  int64_t sizes[kMaxDims] = {};  // innermost first; all > 1 but in a 1-element pass
  // Element strides, never negative; operand 0 is the output (backend_entry_points.h).
  int64_t strides[kMaxOperands][kMaxDims] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int32_t d = 0; d < dims; ++d) n *= sizes[d];
    return n;
  }

  // n dense elements as one row, for a pass that only walks layouts.
  static StridedLayout dense(int64_t n) {
    StridedLayout layout;
    layout.dims = 1;
    layout.sizes[0] = n;
    for (int k = 0; k < kMaxOperands; ++k) layout.strides[k][0] = 1;
    return layout;
  }
};
