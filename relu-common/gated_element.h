// Gated ReLU of one element pair, forward and gradients: the one place where the gated ops'
// semantics live, for every backend. x is [..., 2d]; a = x[..., :d] is activated, b = x[..., d:]
// multiplies it, as vLLM's *_and_mul ops and TransformerEngine's reglu do.
//   kReluAndMul         gate(a) = a > threshold ? a : 0   (NaN -> 0; threshold 0 is ReGLU)
//   kReluSquaredAndMul  gate(a) = a > 0 ? a * a : 0
//   forward  out = gate(a) * b                   squared: (a * a) * b, in that order
//   da       a > threshold ? g * b : 0           squared: a > 0 ? ((2 * a) * b) * g : 0 (selects)
//   db       g * gate(a)
// Computed in OpMath (opmath.h), each result rounded once to the format; the threshold is taken
// in OpMath. A NaN result has unspecified sign and payload.
#pragma once

#include <cstdint>

#include "relu-common/opmath.h"

namespace relu_kernel {

enum class Gate : int32_t { kReluAndMul, kReluSquaredAndMul };

template <Gate kGate, typename T>
RELU_HOST_DEVICE T gate_value(T a, T threshold) {
  if constexpr (kGate == Gate::kReluAndMul) {
    return RELU_KEEP_OR_ZERO(a > threshold, a);
  } else {
    return RELU_KEEP_OR_ZERO(a > T(0), a * a);
  }
}

template <Gate kGate, typename T>
RELU_HOST_DEVICE T gated_forward(T a, T b, T threshold) {
  return gate_value<kGate>(a, threshold) * b;
}

template <Gate kGate, typename T>
RELU_HOST_DEVICE T gated_grad_a(T grad_out, T a, T b, T threshold) {
  if constexpr (kGate == Gate::kReluAndMul) {
    return RELU_KEEP_OR_ZERO(a > threshold, grad_out * b);
  } else {
    return RELU_KEEP_OR_ZERO(a > T(0), ((T(2) * a) * b) * grad_out);
  }
}

template <Gate kGate, typename T>
RELU_HOST_DEVICE T gated_grad_b(T grad_out, T a, T threshold) {
  return grad_out * gate_value<kGate>(a, threshold);
}

// The same on stored elements of format Fmt; `threshold` already in OpMath.
template <Gate kGate, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage gated_forward(typename Fmt::Storage a,
                                                     typename Fmt::Storage b,
                                                     typename OpMath<Fmt>::Type threshold) {
  return from_opmath<Fmt>(gated_forward<kGate>(to_opmath<Fmt>(a), to_opmath<Fmt>(b), threshold));
}

template <Gate kGate, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage gated_grad_a(typename Fmt::Storage grad_out,
                                                            typename Fmt::Storage a,
                                                            typename Fmt::Storage b,
                                                            typename OpMath<Fmt>::Type threshold) {
  return from_opmath<Fmt>(gated_grad_a<kGate>(to_opmath<Fmt>(grad_out), to_opmath<Fmt>(a),
                                                    to_opmath<Fmt>(b), threshold));
}

template <Gate kGate, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage gated_grad_b(typename Fmt::Storage grad_out,
                                                            typename Fmt::Storage a,
                                                            typename OpMath<Fmt>::Type threshold) {
  return from_opmath<Fmt>(
      gated_grad_b<kGate>(to_opmath<Fmt>(grad_out), to_opmath<Fmt>(a), threshold));
}

}  // namespace relu_kernel
