// The gated ops' semantics, for every backend: x [..., 2d], a = x[..., :d], b = x[..., d:].
//   kReluAndMul         gate(a) = a > threshold ? a : 0   (NaN -> 0; threshold 0 is ReGLU)
//   kReluSquaredAndMul  gate(a) = a > 0 ? a * a : 0
//   forward  gate(a) * b;  grad_a  a > threshold ? g * b : 0  (squared: ((2 * a) * b) * g);
//   grad_b   g * gate(a).  In OpMath, rounded once; a NaN's sign and payload are unspecified.
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

// On a Storage of format Fmt; threshold already in OpMath.
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

// The gated ops' passes and their inputs: forward {a, b}; kGradA {grad_out, a, b}; kGradB
// {grad_out, a}.
enum class GatedPassKind : int32_t { kForward, kGradA, kGradB };

template <GatedPassKind kPass>
constexpr int kGatedInputs = kPass == GatedPassKind::kGradA ? 3 : 2;

// One pass over its inputs: OpMath values (no Fmt), or Storages of format Fmt with the
// threshold already in OpMath.
template <Gate kGate, GatedPassKind kPass, typename... Fmt, typename T, typename Threshold>
RELU_HOST_DEVICE T gated_pass(const T (&in)[kGatedInputs<kPass>], Threshold threshold) {
  if constexpr (kPass == GatedPassKind::kForward) {
    return gated_forward<kGate, Fmt...>(in[0], in[1], threshold);
  } else if constexpr (kPass == GatedPassKind::kGradA) {
    return gated_grad_a<kGate, Fmt...>(in[0], in[1], in[2], threshold);
  } else {
    return gated_grad_b<kGate, Fmt...>(in[0], in[1], threshold);
  }
}

}  // namespace relu_kernel
