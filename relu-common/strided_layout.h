// Any layout, no copy: the walk of a pass over tensors that are not one dense block each, or
// not in one order (a chunk, x[:, ::2], a transposed slice, out= of another layout). The
// binding plans it (torch-ext/layout_plan.h) as TensorIterator does: size-1 dimensions
// dropped, the rest ordered innermost first by the operands' strides, neighbours merged where
// every operand has them contiguous. A backend walks it row by row: a row is dimension 0, and
// a row whose operands all have stride 1 there goes through the same vector loop as the dense
// pass. Plain C++ with no torch type, so every backend and host-compiled test can include it.
#pragma once

#include <cstdint>

struct StridedLayout {
  static constexpr int kMaxDims = 25;     // torch's limit for TensorIterator on CUDA
  static constexpr int kMaxOperands = 4;  // the output and up to three inputs
  int32_t dims = 0;                       // 1..kMaxDims
  int64_t sizes[kMaxDims] = {};           // sizes[0]: the row (innermost), all > 1 but a 1-element pass
  // Element strides, never negative; operand 0 is the output, then the inputs in the order of
  // the entry point's signature (forward: x; backward: grad_out, saved; gated: see
  // backend_entry_points.h).
  int64_t strides[kMaxOperands][kMaxDims] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int32_t d = 0; d < dims; ++d) n *= sizes[d];
    return n;
  }
};
