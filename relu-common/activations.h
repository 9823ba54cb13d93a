// The activations and gates every backend computes, and how a runtime (op, dtype) pair
// becomes compile-time element functions (relu_element.h, relu_squared_element.h,
// gated_element.h). relu takes every dtype; relu_squared and the gates those with a gradient.
#pragma once

#include <cstdint>
#include <type_traits>

#include "relu-common/relu_dtypes.h"
#include "relu-common/relu_element.h"
#include "relu-common/gated_element.h"
#include "relu-common/relu_squared_element.h"

namespace relu_kernel {

enum class Activation : int32_t { kRelu, kReluSquared };

template <Activation kActivation>
using ActivationConstant = std::integral_constant<Activation, kActivation>;

template <Gate kGate>
using GateConstant = std::integral_constant<Gate, kGate>;

// fn(integral_constant) for `value`, one of the two values of a two-op enum.
template <auto kFirst, auto kSecond, typename Fn>
void visit_op(decltype(kFirst) value, Fn&& fn) {
  if (value == kFirst) {
    fn(std::integral_constant<decltype(kFirst), kFirst>{});
  } else {
    fn(std::integral_constant<decltype(kFirst), kSecond>{});
  }
}

inline const char* gate_name(Gate gate) {
  return gate == Gate::kReluAndMul ? "relu_and_mul" : "relu_squared_and_mul";
}

// What a backward pass reads beside grad_out: relu's result, relu_squared's input.
inline const char* saved_name(Activation activation) {
  return activation == Activation::kRelu ? "result" : "x";
}

inline const char* activation_name(Activation activation) {
  return activation == Activation::kRelu ? "relu" : "relu_squared";
}

inline bool supports_dtype(Activation activation, ScalarType dtype) {
  return activation == Activation::kRelu ? is_supported(dtype) : has_gradient(dtype);
}

inline const std::string& accepted_dtype_names(Activation activation) {
  return activation == Activation::kRelu ? supported_dtype_names() : gradient_dtype_names();
}

// fn(ActivationConstant, Format) for a forward pass; the binding has checked supports_dtype.
template <typename Fn>
void visit_forward(Activation activation, ScalarType dtype, Fn&& fn) {
  if (activation == Activation::kRelu) {
    visit_format(dtype, [&](auto fmt) { fn(ActivationConstant<Activation::kRelu>{}, fmt); });
  } else {
    visit_gradient_format(
        dtype, [&](auto fmt) { fn(ActivationConstant<Activation::kReluSquared>{}, fmt); });
  }
}

template <typename Fn>
void visit_backward(Activation activation, ScalarType dtype, Fn&& fn) {
  visit_gradient_format(dtype, [&](auto fmt) {
    visit_op<Activation::kRelu, Activation::kReluSquared>(activation,
                                                          [&](auto act) { fn(act, fmt); });
  });
}

// fn(GateConstant, Format) for a gated pass.
template <typename Fn>
void visit_gated(Gate gate, ScalarType dtype, Fn&& fn) {
  visit_gradient_format(dtype, [&](auto fmt) {
    visit_op<Gate::kReluAndMul, Gate::kReluSquaredAndMul>(gate, [&](auto g) { fn(g, fmt); });
  });
}

template <Activation kActivation, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage activation_forward(typename Fmt::Storage x) {
  if constexpr (kActivation == Activation::kRelu) {
    return relu_forward<Fmt>(x);
  } else {
    return relu_squared_forward<Fmt>(x);
  }
}

template <Activation kActivation, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage activation_backward(typename Fmt::Storage grad_out,
                                                           typename Fmt::Storage saved) {
  if constexpr (kActivation == Activation::kRelu) {
    return relu_backward<Fmt>(grad_out, saved);
  } else {
    return relu_squared_backward<Fmt>(grad_out, saved);
  }
}

}  // namespace relu_kernel
