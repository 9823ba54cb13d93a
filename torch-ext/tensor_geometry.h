// The geometry of one tensor as the binding sees it (sizes, strides, dtype, device, density)
// and whether two tensors' elements can share memory: everything the argument checks and
// the layout plan read of a tensor, rebuilt from its sizes and strides because the stable
// ABI has no overlap or memory-format helpers.
#pragma once

#include <torch/csrc/stable/tensor.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

#include "relu-common/relu_dtypes.h"
#include "torch-ext/layout_plan.h"

namespace relu_binding {

using relu_kernel::ScalarType;
using torch::headeronly::DeviceType;
using torch::stable::Tensor;

// Read once per tensor: every accessor of a stable Tensor is a call into libtorch through the
// C shim, and at small sizes the call path is the latency.
struct Geometry {
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
  int64_t dim = 0;
  int64_t numel = 1;
  int32_t dtype_code = 0;  // the shim's dtype number, for allocation
  ScalarType dtype = ScalarType::Undefined;
  int32_t device_type = 0;
  int32_t device_index = 0;
  bool dense = false;  // torch's is_non_overlapping_and_dense (layout_plan.h)

  explicit Geometry(const Tensor& t) {
    AtenTensorHandle h = t.get();
    int64_t* sizes_ptr = nullptr;
    int64_t* strides_ptr = nullptr;
    aoti_torch_get_dim(h, &dim);
    aoti_torch_get_sizes(h, &sizes_ptr);
    aoti_torch_get_strides(h, &strides_ptr);
    aoti_torch_get_dtype(h, &dtype_code);
    aoti_torch_get_device_type(h, &device_type);
    aoti_torch_get_device_index(h, &device_index);
    sizes = sizes_ptr;
    strides = strides_ptr;
    dtype = t.scalar_type();
    for (int64_t d = 0; d < dim; ++d) numel *= sizes[d];
    dense = is_dense(dim, sizes, strides);
  }

  bool same_shape(const Geometry& other) const {
    return std::equal(sizes, sizes + dim, other.sizes, other.sizes + other.dim);
  }

  // Same element order in memory: a flat pass over both is exact when one is dense.
  bool same_strides(const Geometry& other) const {
    for (int64_t d = 0; d < dim; ++d) {
      if (sizes[d] != 1 && strides[d] != other.strides[d]) return false;
    }
    return true;
  }

  bool same_dense_layout(const Geometry& other) const { return dense && same_strides(other); }

  bool same_device(const Geometry& other) const {
    return device_type == other.device_type && device_index == other.device_index;
  }

  // Two elements at one address through a dimension of stride 0 and size > 1 (expand()).
  // Other self-overlapping layouts need as_strided, which torch's own check does not catch
  // either (it answers "too hard"); they are not rejected here.
  bool has_repeated_elements() const {
    for (int64_t d = 0; d < dim; ++d) {
      if (sizes[d] > 1 && strides[d] == 0) return true;
    }
    return false;
  }

  // [first, last) element offsets from the data pointer that the elements touch; numel > 0.
  std::pair<int64_t, int64_t> element_span() const {
    int64_t low = 0, high = 0;
    for (int64_t d = 0; d < dim; ++d) {
      const int64_t reach = (sizes[d] - 1) * strides[d];
      (reach < 0 ? low : high) += reach;
    }
    return {low, high + 1};
  }

  std::string shape() const {
    std::string text = "[";
    for (int64_t d = 0; d < dim; ++d) {
      if (d > 0) text += ", ";
      text += std::to_string(sizes[d]);
    }
    return text + "]";
  }

  std::string device() const {
    const std::string index = std::to_string(device_index);
    switch (DeviceType(device_type)) {
      case DeviceType::CPU: return "cpu";
      case DeviceType::CUDA: return "cuda:" + index;
      case DeviceType::XPU: return "xpu:" + index;
      default: return "device type " + std::to_string(device_type) + ":" + index;
    }
  }

};

// Whether the bytes of two tensors' elements can overlap (both have elements). Exact where
// the byte spans are disjoint, and for two strided tensors whose elements interleave within
// their common stride (x = b[:, ::2] and out = b[:, 1::2]): every element of a starts at
// base_a plus a multiple of g, the gcd of both tensors' byte strides, and every one of b at
// base_b plus a multiple of g, so no two meet when (base_b - base_a) mod g leaves an element's
// width to either side. Otherwise it answers "may", and the caller copies x first: a view
// against a dense tensor, or strides whose gcd leaves no room between the two (a transpose
// onto itself; b[:, ::2] against b[:, 1::3]).
inline bool may_share_memory(const Tensor& a, const Geometry& ga, const Tensor& b, const Geometry& gb) {
  if (ga.numel == 0 || gb.numel == 0) return false;
  const int64_t element = int64_t(a.element_size());
  const auto base_a = int64_t(reinterpret_cast<uintptr_t>(a.const_data_ptr()));
  const auto base_b = int64_t(reinterpret_cast<uintptr_t>(b.const_data_ptr()));
  const auto [a_low, a_high] = ga.element_span();
  const auto [b_low, b_high] = gb.element_span();
  const bool spans_meet = base_a + a_low * element < base_b + b_high * element &&
                          base_b + b_low * element < base_a + a_high * element;
  // A dense tensor of two or more elements has a stride of one element: g is the width.
  if (!spans_meet || ga.dense || gb.dense) return spans_meet;
  int64_t g = 0;
  for (const Geometry* t : {&ga, &gb}) {
    for (int64_t d = 0; d < t->dim; ++d) {
      if (t->sizes[d] > 1) g = std::gcd(g, (t->strides[d] < 0 ? -t->strides[d] : t->strides[d]) * element);
    }
  }
  if (g == 0) return true;  // single elements whose spans meet
  const int64_t phase = ((base_b - base_a) % g + g) % g;
  return phase < element || phase > g - element;
}

}  // namespace relu_binding
