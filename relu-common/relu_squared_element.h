// Squared ReLU of one element, forward and gradient, for the floating formats: the one place
// where relu_squared's semantics live, for the CPU, CUDA and SYCL backends alike.
//   forward   y  = x > 0 ? x * x : 0
//   gradient  dx = x > 0 ? (2 * x) * grad : 0     (a select: NaN or inf grad where x <= 0 gives 0)
// Both computed in OpMath (float; double for float64) and rounded once to the format. A NaN
// result (a gradient's only: inf * 0, or a NaN grad where x > 0) has unspecified sign and payload.
#pragma once

#include "relu-common/opmath.h"

namespace relu_kernel {

template <typename T>
RELU_HOST_DEVICE T relu_squared_forward(T x) {
  return RELU_KEEP_OR_ZERO(x > T(0), x * x);
}

template <typename T>
RELU_HOST_DEVICE T relu_squared_backward(T grad_out, T x) {
  return RELU_KEEP_OR_ZERO(x > T(0), (T(2) * x) * grad_out);
}

template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_squared_forward(typename Fmt::Storage x) {
  return from_opmath<Fmt>(relu_squared_forward(to_opmath<Fmt>(x)));
}

template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_squared_backward(
    typename Fmt::Storage grad_out, typename Fmt::Storage x) {
  return from_opmath<Fmt>(relu_squared_backward(to_opmath<Fmt>(grad_out), to_opmath<Fmt>(x)));
}

}  // namespace relu_kernel
