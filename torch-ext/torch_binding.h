// Entry points of every backend: flat passes over raw pointers, no tensor type, so the
// backends depend on nothing of torch but its header-only dtype enum. The binding
// (torch-ext/torch_binding.cpp) checks every argument and resolves layouts before calling.
// A CPU build compiles relu-cpu only; a CUDA or XPU build compiles its own backend and
// relu-cpu, so that one variant serves CPU tensors too.
#pragma once

#include <cstdint>
#include <string>

#include "torch-ext/relu_dtypes.h"

// out[i] = relu(in[i]) for i < n. `in` and `out` are equal (in place) or do not overlap;
// both point at elements of `dtype`, a supported one.
void relu_flat_cpu(relu_kernel::ScalarType dtype, const void* in, void* out, int64_t n);
void relu_flat_cuda(relu_kernel::ScalarType dtype, const void* in, void* out, int64_t n,
                    int32_t device);
void relu_flat_xpu(relu_kernel::ScalarType dtype, const void* in, void* out, int64_t n,
                   int32_t device);

// grad_in[i] = result[i] > 0 ? grad_out[i] : 0 for i < n; floating dtypes only.
void relu_backward_flat_cpu(relu_kernel::ScalarType dtype, const void* grad_out,
                            const void* result, void* grad_in, int64_t n);
void relu_backward_flat_cuda(relu_kernel::ScalarType dtype, const void* grad_out,
                             const void* result, void* grad_in, int64_t n, int32_t device);
void relu_backward_flat_xpu(relu_kernel::ScalarType dtype, const void* grad_out,
                            const void* result, void* grad_in, int64_t n, int32_t device);

// ---- Any layout, no copy: a pass over tensors that are not one dense block each, or not in
// one order (a chunk, x[:, ::2], a transposed slice, out= of another layout). The binding
// describes the walk as TensorIterator does: size-1 dimensions dropped, the rest ordered
// innermost first by the operands' strides, neighbours merged where every operand has them
// contiguous. A backend walks it row by row: a row is dimension 0, and a row whose operands
// all have stride 1 there goes through the same vector loop as the dense pass.
struct StridedLayout {
  static constexpr int kMaxDims = 25;     // torch's limit for TensorIterator on CUDA
  static constexpr int kMaxOperands = 3;  // the output and up to two inputs
  int32_t dims = 0;                       // 1..kMaxDims
  int64_t sizes[kMaxDims] = {};           // sizes[0]: the row (innermost), all > 1 but a 1-element pass
  // Element strides, never negative; operand 0 is the output, then the inputs in the order of
  // the flat signature (forward: x; backward: grad_out, result).
  int64_t strides[kMaxOperands][kMaxDims] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int32_t d = 0; d < dims; ++d) n *= sizes[d];
    return n;
  }
};

// The strided forms of the flat passes above. The operands do not overlap, except that out
// may be the input itself with the same strides (in place): each element is read before it
// is written.
void relu_strided_cpu(relu_kernel::ScalarType dtype, const void* in, void* out,
                      const StridedLayout& layout);
void relu_strided_cuda(relu_kernel::ScalarType dtype, const void* in, void* out,
                       const StridedLayout& layout, int32_t device);
void relu_backward_strided_cpu(relu_kernel::ScalarType dtype, const void* grad_out,
                               const void* result, void* grad_in, const StridedLayout& layout);
void relu_backward_strided_cuda(relu_kernel::ScalarType dtype, const void* grad_out,
                                const void* result, void* grad_in, const StridedLayout& layout,
                                int32_t device);

// Which SIMD variant the CPU kernel runs: "avx512", "avx2" or "portable".
std::string relu_cpu_isa();
