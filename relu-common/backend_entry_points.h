// Entry points of every backend: passes over raw pointers, no tensor type, so the backends
// depend on nothing of torch but its header-only dtype enum. The binding (torch-ext/) checks
// every argument and plans layouts before calling. A CPU build compiles relu-cpu only; a
// CUDA or XPU build compiles its own backend and relu-cpu, so that one variant serves CPU
// tensors too.
#pragma once

#include <cstdint>
#include <string>

#include "relu-common/activations.h"
#include "relu-common/strided_layout.h"

using relu_kernel::Activation;
using relu_kernel::ScalarType;

// out[i] = activation(in[i]) for i < n. `in` and `out` are equal (in place) or do not overlap;
// both point at elements of `dtype`, one the activation supports.
void relu_flat_cpu(Activation activation, ScalarType dtype, const void* in, void* out, int64_t n);
void relu_flat_cuda(Activation activation, ScalarType dtype, const void* in, void* out, int64_t n,
                    int32_t device);
void relu_flat_xpu(Activation activation, ScalarType dtype, const void* in, void* out, int64_t n,
                   int32_t device);

// grad_in[i] = backward_element(grad_out[i], saved[i]) for i < n (activations.h: saved is relu's
// result, relu_squared's x); dtypes with a gradient only.
void relu_backward_flat_cpu(Activation activation, ScalarType dtype, const void* grad_out,
                            const void* saved, void* grad_in, int64_t n);
void relu_backward_flat_cuda(Activation activation, ScalarType dtype, const void* grad_out,
                             const void* saved, void* grad_in, int64_t n, int32_t device);
void relu_backward_flat_xpu(Activation activation, ScalarType dtype, const void* grad_out,
                            const void* saved, void* grad_in, int64_t n, int32_t device);

// The strided forms of the flat passes above (relu-common/strided_layout.h). The operands do
// not overlap, except that out may be the input itself with the same strides (in place):
// each element is read before it is written.
void relu_strided_cpu(Activation activation, ScalarType dtype, const void* in, void* out,
                      const StridedLayout& layout);
void relu_strided_cuda(Activation activation, ScalarType dtype, const void* in, void* out,
                       const StridedLayout& layout, int32_t device);
void relu_backward_strided_cpu(Activation activation, ScalarType dtype, const void* grad_out,
                               const void* saved, void* grad_in, const StridedLayout& layout);
void relu_backward_strided_cuda(Activation activation, ScalarType dtype, const void* grad_out,
                                const void* saved, void* grad_in, const StridedLayout& layout,
                                int32_t device);

// The gated ops (gated_element.h) over the halves of x [..., 2d] as two input streams, walked
// as `layout` (operand 0: the output half, 1: grad_out, then a and b for the backward; 1: a,
// 2: b for the forward). threshold: the kReluAndMul gate's, in OpMath.
//   forward   out = gate(a) * b
//   backward  grad_a and grad_b (the halves of grad_x, one stride set: operand 0) in two passes:
//             grad_a from (grad_out, a, b), then grad_b from (grad_out, a)
void gated_strided_cpu(relu_kernel::Gate gate, ScalarType dtype, const void* a, const void* b,
                       void* out, const StridedLayout& layout, double threshold);
void gated_strided_cuda(relu_kernel::Gate gate, ScalarType dtype, const void* a, const void* b,
                        void* out, const StridedLayout& layout, double threshold, int32_t device);
void gated_backward_strided_cpu(relu_kernel::Gate gate, ScalarType dtype, const void* grad_out,
                                const void* a, const void* b, void* grad_a, void* grad_b,
                                const StridedLayout& layout, double threshold);
void gated_backward_strided_cuda(relu_kernel::Gate gate, ScalarType dtype, const void* grad_out,
                                 const void* a, const void* b, void* grad_a, void* grad_b,
                                 const StridedLayout& layout, double threshold, int32_t device);
// XPU (no walk): the same over dense halves of n elements each.
void gated_flat_xpu(relu_kernel::Gate gate, ScalarType dtype, const void* a, const void* b,
                    void* out, int64_t n, double threshold, int32_t device);
void gated_backward_flat_xpu(relu_kernel::Gate gate, ScalarType dtype, const void* grad_out,
                             const void* a, const void* b, void* grad_a, void* grad_b, int64_t n,
                             double threshold, int32_t device);

// Which SIMD variant the CPU kernel runs: "avx512", "avx2" or "portable".
std::string relu_cpu_isa();
