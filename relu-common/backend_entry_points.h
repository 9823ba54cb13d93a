// Every backend's entry points, one signature set over raw pointers: a backend needs nothing
// of torch but its dtype enum. The binding has checked the arguments and planned the walk.
#pragma once

#include <cstdint>
#include <string>

#include "relu-common/activations.h"
#include "relu-common/strided_layout.h"

using relu_kernel::Activation;
using relu_kernel::Gate;
using relu_kernel::ScalarType;

enum class Device { kCpu, kCuda, kXpu };

// What a pass runs over: n dense elements (layout null), or *layout. Dense stays its own case
// so that a contiguous pass costs no layout on the host and takes the GPU's dense forms.
struct Walk {
  int64_t n = 0;
  const StridedLayout* layout = nullptr;
};

// Operand 0 is the output, then the inputs in signature order; out may be x itself (in place)
// but overlaps no input otherwise. The CPU ignores `device`.
template <Device kDevice>
struct Backend {
  // XPU has no walk of its own: the binding hands it dense walks only.
  static constexpr bool kWalksLayouts = kDevice != Device::kXpu;

  static void forward(Activation activation, ScalarType dtype, const void* x, void* out,
                      Walk walk, int32_t device);
  // saved: relu's result, relu_squared's x (activations.h).
  static void backward(Activation activation, ScalarType dtype, const void* grad_out,
                       const void* saved, void* grad_in, Walk walk, int32_t device);
  // a, b: the halves of x [..., 2d]; the walk's sizes are those of one half.
  static void gated_forward(Gate gate, ScalarType dtype, const void* a, const void* b, void* out,
                            Walk walk, double threshold, int32_t device);
  // grad_a from (grad_out, a, b), then grad_b (operand 0's strides) from (grad_out, a).
  static void gated_backward(Gate gate, ScalarType dtype, const void* grad_out, const void* a,
                             const void* b, void* grad_a, void* grad_b, Walk walk,
                             double threshold, int32_t device);
};

// Each backend's source defines its members; explicit specializations are declared before use.
#define RELU_DECLARE_BACKEND(kDevice)                                                           \
  template <> void Backend<kDevice>::forward(Activation, ScalarType, const void*, void*, Walk,  \
                                             int32_t);                                           \
  template <> void Backend<kDevice>::backward(Activation, ScalarType, const void*, const void*, \
                                              void*, Walk, int32_t);                             \
  template <> void Backend<kDevice>::gated_forward(Gate, ScalarType, const void*, const void*,  \
                                                   void*, Walk, double, int32_t);                \
  template <> void Backend<kDevice>::gated_backward(Gate, ScalarType, const void*, const void*, \
                                                    const void*, void*, void*, Walk, double,     \
                                                    int32_t);
RELU_DECLARE_BACKEND(Device::kCpu)
RELU_DECLARE_BACKEND(Device::kCuda)
RELU_DECLARE_BACKEND(Device::kXpu)
#undef RELU_DECLARE_BACKEND

// "avx512", "avx2" or "portable".
std::string relu_cpu_isa();
