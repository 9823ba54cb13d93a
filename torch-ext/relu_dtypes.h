// The one map from torch dtypes to element formats, used by the binding and every backend's
// launcher. Adding a dtype means a Format in relu-common/relu_element.h and a case in each
// function here.
#pragma once

#include <torch/headeronly/core/ScalarType.h>  // header-only: no libtorch symbol

#include <stdexcept>
#include <string>

#include "relu-common/relu_element.h"

namespace relu_kernel {

using torch::headeronly::ScalarType;

// Calls fn(Format{}) with the format of `dtype`.
template <typename Fn>
void visit_format(ScalarType dtype, Fn&& fn) {
  switch (dtype) {
    case ScalarType::Float: return fn(Float32Format{});
    case ScalarType::Half: return fn(Float16Format{});
    case ScalarType::BFloat16: return fn(BFloat16Format{});
    case ScalarType::Double: return fn(Float64Format{});
    case ScalarType::Char: return fn(Int8Format{});
    case ScalarType::Short: return fn(Int16Format{});
    case ScalarType::Int: return fn(Int32Format{});
    case ScalarType::Long: return fn(Int64Format{});
    case ScalarType::Byte: return fn(UInt8Format{});
    case ScalarType::UInt16: return fn(UInt16Format{});
    case ScalarType::UInt32: return fn(UInt32Format{});
    case ScalarType::UInt64: return fn(UInt64Format{});
    case ScalarType::Float8_e4m3fn: return fn(Float8E4M3FnFormat{});
    case ScalarType::Float8_e5m2: return fn(Float8E5M2Format{});
    case ScalarType::Float8_e4m3fnuz:
    case ScalarType::Float8_e5m2fnuz: return fn(Float8FnuzFormat{});
    default: throw std::runtime_error("relu: no kernel for this dtype");
  }
}

// visit_format for the backward kernels, which exist for the dtypes relu has a gradient for
// (Format::kHasGradient) only: the binding rejects the others before calling a backend, and
// no backend compiles backward loops for them.
template <typename Fn>
void visit_gradient_format(ScalarType dtype, Fn&& fn) {
  visit_format(dtype, [&](auto fmt) {
    if constexpr (decltype(fmt)::kHasGradient) {
      fn(fmt);
    } else {
      throw std::logic_error("relu_backward: no gradient for an integer or float8 dtype");
    }
  });
}

inline bool is_supported(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float: case ScalarType::Half: case ScalarType::BFloat16:
    case ScalarType::Double: case ScalarType::Char: case ScalarType::Short:
    case ScalarType::Int: case ScalarType::Long: case ScalarType::Byte:
    case ScalarType::UInt16: case ScalarType::UInt32: case ScalarType::UInt64:
    case ScalarType::Float8_e4m3fn: case ScalarType::Float8_e5m2:
    case ScalarType::Float8_e4m3fnuz: case ScalarType::Float8_e5m2fnuz:
      return true;
    default:
      return false;
  }
}

// The dtypes relu has a gradient for (Format::kHasGradient): not the float8 ones.
inline bool is_floating(ScalarType dtype) {
  return dtype == ScalarType::Float || dtype == ScalarType::Half ||
         dtype == ScalarType::BFloat16 || dtype == ScalarType::Double;
}

constexpr const char* kSupportedDtypes =
    "float32, float16, bfloat16, float64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, "
    "float8_e5m2fnuz, int8, int16, int32, int64, uint8, uint16, uint32, uint64";

// The name a Python user knows (torch.float32), for error messages.
inline std::string dtype_name(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float: return "float32";
    case ScalarType::Half: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Double: return "float64";
    case ScalarType::Char: return "int8";
    case ScalarType::Short: return "int16";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Byte: return "uint8";
    case ScalarType::UInt16: return "uint16";
    case ScalarType::UInt32: return "uint32";
    case ScalarType::UInt64: return "uint64";
    case ScalarType::Float8_e4m3fn: return "float8_e4m3fn";
    case ScalarType::Float8_e5m2: return "float8_e5m2";
    case ScalarType::Float8_e4m3fnuz: return "float8_e4m3fnuz";
    case ScalarType::Float8_e5m2fnuz: return "float8_e5m2fnuz";
    case ScalarType::Float8_e8m0fnu: return "float8_e8m0fnu";
    case ScalarType::Bool: return "bool";
    case ScalarType::ComplexFloat: return "complex64";
    case ScalarType::ComplexDouble: return "complex128";
    default: return torch::headeronly::toString(dtype);
  }
}

}  // namespace relu_kernel
