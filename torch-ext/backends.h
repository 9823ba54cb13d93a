// Backend dispatch: one adapter per device type this build serves, each forwarding to that
// backend's entry points (relu-common/backend_entry_points.h) with one signature, so the op
// bodies (torch_binding.cpp) are written once as templates over the adapter.
// kWalksLayouts: the backend walks a StridedLayout itself (strided_forward/backward).
#pragma once

#include <cstdint>

#include "relu-common/backend_entry_points.h"

namespace relu_binding {

using relu_kernel::ScalarType;

struct CpuBackend {
  static constexpr bool kWalksLayouts = true;
  static void strided_forward(ScalarType dtype, const void* in, void* out,
                              const StridedLayout& layout, int32_t) {
    relu_strided_cpu(dtype, in, out, layout);
  }
  static void strided_backward(ScalarType dtype, const void* grad, const void* result,
                               void* grad_in, const StridedLayout& layout, int32_t) {
    relu_backward_strided_cpu(dtype, grad, result, grad_in, layout);
  }
  static void forward(ScalarType dtype, const void* in, void* out, int64_t n, int32_t) {
    relu_flat_cpu(dtype, in, out, n);
  }
  static void backward(ScalarType dtype, const void* grad, const void* result, void* grad_in,
                       int64_t n, int32_t) {
    relu_backward_flat_cpu(dtype, grad, result, grad_in, n);
  }
};

#if defined(CUDA_KERNEL)
struct CudaBackend {
  static constexpr bool kWalksLayouts = true;
  static void strided_forward(ScalarType dtype, const void* in, void* out,
                              const StridedLayout& layout, int32_t device) {
    relu_strided_cuda(dtype, in, out, layout, device);
  }
  static void strided_backward(ScalarType dtype, const void* grad, const void* result,
                               void* grad_in, const StridedLayout& layout, int32_t device) {
    relu_backward_strided_cuda(dtype, grad, result, grad_in, layout, device);
  }
  static void forward(ScalarType dtype, const void* in, void* out, int64_t n, int32_t device) {
    relu_flat_cuda(dtype, in, out, n, device);
  }
  static void backward(ScalarType dtype, const void* grad, const void* result, void* grad_in,
                       int64_t n, int32_t device) {
    relu_backward_flat_cuda(dtype, grad, result, grad_in, n, device);
  }
};
#endif

#if defined(XPU_KERNEL)
// Flat passes only (no SYCL compiler here to build and no device to run a walk): other
// layouts go through dense copies.
struct XpuBackend {
  static constexpr bool kWalksLayouts = false;
  static void forward(ScalarType dtype, const void* in, void* out, int64_t n, int32_t device) {
    relu_flat_xpu(dtype, in, out, n, device);
  }
  static void backward(ScalarType dtype, const void* grad, const void* result, void* grad_in,
                       int64_t n, int32_t device) {
    relu_backward_flat_xpu(dtype, grad, result, grad_in, n, device);
  }
};
#endif

}  // namespace relu_binding
