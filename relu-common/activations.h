// The activations every backend computes, and how a runtime (activation, dtype) pair becomes
// compile-time element functions. Each activation's semantics live in its element header.
//   kRelu         relu_element.h            every dtype of relu_dtypes.h; gradient from the result
//   kReluSquared  relu_squared_element.h    the dtypes with a gradient; gradient from x
// and the gated ops (gated_element.h), the dtypes with a gradient.
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

inline const char* gate_name(Gate gate) {
  return gate == Gate::kReluAndMul ? "relu_and_mul" : "relu_squared_and_mul";
}

// Calls fn(GateConstant<G>{}, Format{}) for a gated pass: the dtypes with a gradient only.
template <typename Fn>
void visit_gated(Gate gate, ScalarType dtype, Fn&& fn) {
  visit_gradient_format(dtype, [&](auto fmt) {
    if (gate == Gate::kReluAndMul) {
      fn(GateConstant<Gate::kReluAndMul>{}, fmt);
    } else {
      fn(GateConstant<Gate::kReluSquaredAndMul>{}, fmt);
    }
  });
}

// The tensor a backward pass reads beside grad_out: relu's result, or relu_squared's input.
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

// Calls fn(ActivationConstant<A>{}, Format{}) for a forward pass; the binding has checked
// supports_dtype.
template <typename Fn>
void visit_forward(Activation activation, ScalarType dtype, Fn&& fn) {
  if (activation == Activation::kRelu) {
    visit_format(dtype, [&](auto fmt) { fn(ActivationConstant<Activation::kRelu>{}, fmt); });
  } else {
    visit_gradient_format(
        dtype, [&](auto fmt) { fn(ActivationConstant<Activation::kReluSquared>{}, fmt); });
  }
}

// The same for a backward pass: the dtypes with a gradient only.
template <typename Fn>
void visit_backward(Activation activation, ScalarType dtype, Fn&& fn) {
  visit_gradient_format(dtype, [&](auto fmt) {
    if (activation == Activation::kRelu) {
      fn(ActivationConstant<Activation::kRelu>{}, fmt);
    } else {
      fn(ActivationConstant<Activation::kReluSquared>{}, fmt);
    }
  });
}

template <Activation kActivation, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage forward_element(typename Fmt::Storage x) {
  if constexpr (kActivation == Activation::kRelu) {
    return relu_forward<Fmt>(x);
  } else {
    return relu_squared_forward<Fmt>(x);
  }
}

// grad_in of one element from grad_out and the saved tensor (saved_name).
template <Activation kActivation, typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage backward_element(typename Fmt::Storage grad_out,
                                                        typename Fmt::Storage saved) {
  if constexpr (kActivation == Activation::kRelu) {
    return relu_backward<Fmt>(grad_out, saved);
  } else {
    return relu_squared_backward<Fmt>(grad_out, saved);
  }
}

}  // namespace relu_kernel
