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

// Which SIMD variant the CPU kernel runs: "avx512", "avx2" or "portable".
std::string relu_cpu_isa();
