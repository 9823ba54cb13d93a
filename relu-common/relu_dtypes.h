// The dtypes relu takes, in one table, and all that derives from it: the visitors from a
// runtime dtype to a Format, the checks, the error messages' names, and the table the Python
// package reads at import. A new dtype is one row here (and its Format, if new).
#pragma once

#include <torch/headeronly/core/ScalarType.h>  // header-only: no libtorch symbol

#include <stdexcept>
#include <string>

#include "relu-common/relu_element.h"

namespace relu_kernel {

using torch::headeronly::ScalarType;

// ROW(torch ScalarType, Format, torch.<name>), in the order error messages list them.
#define RELU_DTYPE_TABLE(ROW)                              \
  ROW(Float, Float32Format, "float32")                     \
  ROW(Half, Float16Format, "float16")                      \
  ROW(BFloat16, BFloat16Format, "bfloat16")                \
  ROW(Double, Float64Format, "float64")                    \
  ROW(Float8_e4m3fn, Float8E4M3FnFormat, "float8_e4m3fn")  \
  ROW(Float8_e5m2, Float8E5M2Format, "float8_e5m2")        \
  ROW(Float8_e4m3fnuz, Float8FnuzFormat, "float8_e4m3fnuz") \
  ROW(Float8_e5m2fnuz, Float8FnuzFormat, "float8_e5m2fnuz") \
  ROW(Char, Int8Format, "int8")                            \
  ROW(Short, Int16Format, "int16")                         \
  ROW(Int, Int32Format, "int32")                           \
  ROW(Long, Int64Format, "int64")                          \
  ROW(Byte, UInt8Format, "uint8")                          \
  ROW(UInt16, UInt16Format, "uint16")                      \
  ROW(UInt32, UInt32Format, "uint32")                      \
  ROW(UInt64, UInt64Format, "uint64")

// Calls fn(Format{}) with the format of `dtype`.
template <typename Fn>
void visit_format(ScalarType dtype, Fn&& fn) {
  switch (dtype) {
#define RELU_VISIT_ROW(scalar_type, format, name) \
  case ScalarType::scalar_type: return fn(format{});
    RELU_DTYPE_TABLE(RELU_VISIT_ROW)
#undef RELU_VISIT_ROW
    default: throw std::runtime_error("relu: no kernel for this dtype");
  }
}

// Only the formats with a gradient, so that no backend compiles backward loops for others.
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
#define RELU_SUPPORTED_ROW(scalar_type, format, name) case ScalarType::scalar_type:
    RELU_DTYPE_TABLE(RELU_SUPPORTED_ROW)
#undef RELU_SUPPORTED_ROW
      return true;
    default:
      return false;
  }
}

inline bool has_gradient(ScalarType dtype) {
  switch (dtype) {
#define RELU_GRADIENT_ROW(scalar_type, format, name) \
  case ScalarType::scalar_type: return format::kHasGradient;
    RELU_DTYPE_TABLE(RELU_GRADIENT_ROW)
#undef RELU_GRADIENT_ROW
    default: return false;
  }
}

// The table's names, ", "-joined in its order: every dtype, or those with a gradient only.
inline std::string joined_dtype_names(bool with_gradient_only) {
  std::string text;
#define RELU_NAME_ROW(scalar_type, format, name) \
  if (!with_gradient_only || format::kHasGradient) text += text.empty() ? name : ", " name;
  RELU_DTYPE_TABLE(RELU_NAME_ROW)
#undef RELU_NAME_ROW
  return text;
}

inline const std::string& supported_dtype_names() {
  static const std::string names = joined_dtype_names(false);
  return names;
}

inline const std::string& gradient_dtype_names() {
  static const std::string names = joined_dtype_names(true);
  return names;
}

// "float32=1,...,int8=0,...": name=has-gradient, for the Python package.
inline const std::string& dtype_table_text() {
  static const std::string text = [] {
    std::string rows;
#define RELU_TEXT_ROW(scalar_type, format, name)            \
  rows += rows.empty() ? name : "," name;                   \
  rows += format::kHasGradient ? "=1" : "=0";
    RELU_DTYPE_TABLE(RELU_TEXT_ROW)
#undef RELU_TEXT_ROW
    return rows;
  }();
  return text;
}

// torch's Python name, for the dtypes relu rejects too.
inline std::string dtype_name(ScalarType dtype) {
  switch (dtype) {
#define RELU_DTYPE_NAME_ROW(scalar_type, format, name) \
  case ScalarType::scalar_type: return name;
    RELU_DTYPE_TABLE(RELU_DTYPE_NAME_ROW)
#undef RELU_DTYPE_NAME_ROW
    case ScalarType::Float8_e8m0fnu: return "float8_e8m0fnu";
    case ScalarType::Bool: return "bool";
    case ScalarType::ComplexFloat: return "complex64";
    case ScalarType::ComplexDouble: return "complex128";
    default: return torch::headeronly::toString(dtype);
  }
}

}  // namespace relu_kernel
