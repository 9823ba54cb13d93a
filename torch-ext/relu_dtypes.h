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
    default: throw std::runtime_error("relu: no kernel for this dtype");
  }
}

inline bool is_supported(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float: case ScalarType::Half: case ScalarType::BFloat16:
    case ScalarType::Double: case ScalarType::Char: case ScalarType::Short:
    case ScalarType::Int: case ScalarType::Long: case ScalarType::Byte:
      return true;
    default:
      return false;
  }
}

inline bool is_floating(ScalarType dtype) {
  return dtype == ScalarType::Float || dtype == ScalarType::Half ||
         dtype == ScalarType::BFloat16 || dtype == ScalarType::Double;
}

constexpr const char* kSupportedDtypes =
    "float32, float16, bfloat16, float64, int8, int16, int32, int64, uint8";

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
    case ScalarType::Bool: return "bool";
    case ScalarType::ComplexFloat: return "complex64";
    case ScalarType::ComplexDouble: return "complex128";
    default: return torch::headeronly::toString(dtype);
  }
}

}  // namespace relu_kernel
