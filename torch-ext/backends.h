// Backend dispatch: one adapter per device type this build serves, each forwarding to that
// backend's entry points (relu-common/backend_entry_points.h) with one signature, so the op
// bodies (torch_binding.cpp) are written once as templates over the adapter.
// kWalksLayouts: the backend walks a StridedLayout itself (strided_forward/backward).
#pragma once

#include <cstdint>

#include "relu-common/backend_entry_points.h"

namespace relu_binding {


struct CpuBackend {
  static constexpr bool kWalksLayouts = true;
  static void strided_forward(Activation activation, ScalarType dtype, const void* in, void* out,
                              const StridedLayout& layout, int32_t) {
    relu_strided_cpu(activation, dtype, in, out, layout);
  }
  static void strided_backward(Activation activation, ScalarType dtype, const void* grad, const void* saved,
                               void* grad_in, const StridedLayout& layout, int32_t) {
    relu_backward_strided_cpu(activation, dtype, grad, saved, grad_in, layout);
  }
  static void forward(Activation activation, ScalarType dtype, const void* in, void* out, int64_t n, int32_t) {
    relu_flat_cpu(activation, dtype, in, out, n);
  }
  static void backward(Activation activation, ScalarType dtype, const void* grad, const void* saved, void* grad_in,
                       int64_t n, int32_t) {
    relu_backward_flat_cpu(activation, dtype, grad, saved, grad_in, n);
  }
  static void gated_forward(relu_kernel::Gate gate, ScalarType dtype, const void* a, const void* b,
                            void* out, const StridedLayout& layout, double threshold, int32_t) {
    gated_strided_cpu(gate, dtype, a, b, out, layout, threshold);
  }
  static void gated_backward(relu_kernel::Gate gate, ScalarType dtype, const void* grad_out,
                             const void* a, const void* b, void* grad_a, void* grad_b,
                             const StridedLayout& layout, double threshold, int32_t) {
    gated_backward_strided_cpu(gate, dtype, grad_out, a, b, grad_a, grad_b, layout, threshold);
  }
};

#if defined(CUDA_KERNEL)
struct CudaBackend {
  static constexpr bool kWalksLayouts = true;
  static void strided_forward(Activation activation, ScalarType dtype, const void* in, void* out,
                              const StridedLayout& layout, int32_t device) {
    relu_strided_cuda(activation, dtype, in, out, layout, device);
  }
  static void strided_backward(Activation activation, ScalarType dtype, const void* grad, const void* saved,
                               void* grad_in, const StridedLayout& layout, int32_t device) {
    relu_backward_strided_cuda(activation, dtype, grad, saved, grad_in, layout, device);
  }
  static void forward(Activation activation, ScalarType dtype, const void* in, void* out, int64_t n, int32_t device) {
    relu_flat_cuda(activation, dtype, in, out, n, device);
  }
  static void backward(Activation activation, ScalarType dtype, const void* grad, const void* saved, void* grad_in,
                       int64_t n, int32_t device) {
    relu_backward_flat_cuda(activation, dtype, grad, saved, grad_in, n, device);
  }
  static void gated_forward(relu_kernel::Gate gate, ScalarType dtype, const void* a, const void* b,
                            void* out, const StridedLayout& layout, double threshold,
                            int32_t device) {
    gated_strided_cuda(gate, dtype, a, b, out, layout, threshold, device);
  }
  static void gated_backward(relu_kernel::Gate gate, ScalarType dtype, const void* grad_out,
                             const void* a, const void* b, void* grad_a, void* grad_b,
                             const StridedLayout& layout, double threshold, int32_t device) {
    gated_backward_strided_cuda(gate, dtype, grad_out, a, b, grad_a, grad_b, layout, threshold,
                                device);
  }
};
#endif

#if defined(XPU_KERNEL)
// Flat passes only (no SYCL compiler here to build and no device to run a walk): other
// layouts go through dense copies.
struct XpuBackend {
  static constexpr bool kWalksLayouts = false;
  static void forward(Activation activation, ScalarType dtype, const void* in, void* out, int64_t n, int32_t device) {
    relu_flat_xpu(activation, dtype, in, out, n, device);
  }
  static void backward(Activation activation, ScalarType dtype, const void* grad, const void* saved, void* grad_in,
                       int64_t n, int32_t device) {
    relu_backward_flat_xpu(activation, dtype, grad, saved, grad_in, n, device);
  }
  // Dense operands only (the binding copies the halves first): a layout of one row.
  static void gated_forward(relu_kernel::Gate gate, ScalarType dtype, const void* a, const void* b,
                            void* out, const StridedLayout& layout, double threshold,
                            int32_t device) {
    gated_flat_xpu(gate, dtype, a, b, out, layout.numel(), threshold, device);
  }
  static void gated_backward(relu_kernel::Gate gate, ScalarType dtype, const void* grad_out,
                             const void* a, const void* b, void* grad_a, void* grad_b,
                             const StridedLayout& layout, double threshold, int32_t device) {
    gated_backward_flat_xpu(gate, dtype, grad_out, a, b, grad_a, grad_b, layout.numel(),
                            threshold, device);
  }
};
#endif

}  // namespace relu_binding
