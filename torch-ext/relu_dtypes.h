// The one map from torch dtypes to element formats, used by every backend's launcher.
// Adding a dtype means a Format in relu-common/relu_element.h, a case here and one in
// is_supported() (torch_binding.cpp).
#pragma once

#include <ATen/core/Tensor.h>  // not <torch/all.h>: nvcc parses this once per CUDA arch

#include "relu-common/relu_element.h"

namespace relu_kernel {

// Calls fn(Format{}) with the format of `dtype`.
template <typename Fn>
void visit_format(at::ScalarType dtype, Fn&& fn) {
  switch (dtype) {
    case at::kFloat: return fn(Float32Format{});
    case at::kHalf: return fn(Float16Format{});
    case at::kBFloat16: return fn(BFloat16Format{});
    case at::kDouble: return fn(Float64Format{});
    case at::kChar: return fn(Int8Format{});
    case at::kShort: return fn(Int16Format{});
    case at::kInt: return fn(Int32Format{});
    case at::kLong: return fn(Int64Format{});
    case at::kByte: return fn(UInt8Format{});
    default: TORCH_CHECK(false, "relu: no kernel for dtype ", c10::toString(dtype));
  }
}

template <typename Fmt>
const typename Fmt::Storage* data_of(const at::Tensor& t) {
  return static_cast<const typename Fmt::Storage*>(t.const_data_ptr());
}

template <typename Fmt>
typename Fmt::Storage* mutable_data_of(at::Tensor& t) {
  return static_cast<typename Fmt::Storage*>(t.mutable_data_ptr());
}

}  // namespace relu_kernel
