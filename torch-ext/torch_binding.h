// Entry points of every backend. One build compiles exactly one backend (CPU_KERNEL,
// CUDA_KERNEL or XPU_KERNEL); the rest of the op (argument checks, layouts, autograd) is
// shared in torch-ext/torch_binding.cpp.
#pragma once

#include <ATen/core/Tensor.h>  // not <torch/all.h>: nvcc parses this once per CUDA arch

#include <string>

// out = x > 0 ? x : 0 over `n` elements at `in`/`out` (equal, or not overlapping).
// Both pointers come from tensors of x's dtype; the caller has checked everything else.
void relu_flat_cpu(const at::Tensor& x, at::Tensor& out);
void relu_flat_cuda(const at::Tensor& x, at::Tensor& out);
void relu_flat_xpu(const at::Tensor& x, at::Tensor& out);

// Which SIMD variant the CPU kernel runs: "avx512", "avx2" or "portable".
std::string relu_cpu_isa();

// grad_in = result > 0 ? grad_out : 0, elementwise over dense tensors of one layout.
void relu_backward_flat_cpu(const at::Tensor& grad_out, const at::Tensor& result, at::Tensor& grad_in);
void relu_backward_flat_cuda(const at::Tensor& grad_out, const at::Tensor& result, at::Tensor& grad_in);
void relu_backward_flat_xpu(const at::Tensor& grad_out, const at::Tensor& result, at::Tensor& grad_in);
