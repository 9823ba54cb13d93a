// The relu ops on the torch stable ABI: argument checks and layout handling, shared by every
// backend. Built against torch/csrc/stable and torch/headeronly only, with
// TORCH_TARGET_VERSION = 2.11, so one binary loads on every torch from 2.11 on. A backend
// supplies a flat pass over raw pointers (torch_binding.h); everything a user can get wrong
// is rejected here, before any write. Autograd lives in Python (torch-ext/relu/functions.py):
// the stable ABI has no C++ autograd API.
//
//   relu(Tensor x) -> Tensor                          allocating
//   relu_out(Tensor(a!) out, Tensor x) -> ()          writes out; out may be x (in place)
//   relu_backward(Tensor grad_out, Tensor result) -> Tensor     grad_out * (result > 0)
//
// Every build registers the CPU kernels; a CUDA build registers its CUDA kernels beside
// them, so one variant serves tensors on every device of the machine, as torch ops do.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "registration.h"
#include "torch-ext/torch_binding.h"

namespace {

using relu_kernel::ScalarType;
using relu_kernel::dtype_name;
using torch::headeronly::DeviceType;
using torch::stable::Tensor;

// Every bad argument raises std::invalid_argument before anything is written: torch hands it
// to Python as ValueError (pybind11's translation), and the Python wrapper raises dtype
// mistakes again as TypeError (functions.py). Messages are built from strings only: the H200
// image's g++ 13.3 once compiled libstdc++'s number formatting into the extension, and
// formatting an integer through that copy crashed (results/h200/run3/crash_backtrace.txt).
[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

// ---- What the checks and the launch need of one tensor, read once: every accessor of a
// stable Tensor is a call into libtorch through the C shim, and at small sizes the call path
// is the latency. Layout facts are rebuilt from sizes and strides (the stable ABI has no
// overlap or memory-format helpers).
struct Geometry {
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
  int64_t dim = 0;
  int64_t numel = 1;
  int32_t dtype_code = 0;  // the shim's dtype number, for allocation
  ScalarType dtype = ScalarType::Undefined;
  int32_t device_type = 0;
  int32_t device_index = 0;
  bool dense = false;  // torch's is_non_overlapping_and_dense

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
    dense = is_dense();
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

 private:
  // Some permutation of the dimensions is contiguous. Dimensions of size 1 place nothing.
  bool is_dense() const {
    constexpr int64_t kInlineDims = 16;  // beyond this, an allocation
    std::array<int64_t, kInlineDims> inline_order;
    std::vector<int64_t> heap_order;
    int64_t* order = inline_order.data();
    if (dim > kInlineDims) {
      heap_order.resize(size_t(dim));
      order = heap_order.data();
    }
    // Insertion sort by stride: a handful of dimensions, and std::stable_sort would allocate
    // a buffer on every call.
    int64_t count = 0;
    for (int64_t d = 0; d < dim; ++d) {
      if (sizes[d] == 1) continue;
      int64_t i = count++;
      for (; i > 0 && strides[order[i - 1]] > strides[d]; --i) order[i] = order[i - 1];
      order[i] = d;
    }
    int64_t expected = 1;
    for (int64_t i = 0; i < count; ++i) {
      if (strides[order[i]] != expected) return false;
      expected *= sizes[order[i]];
    }
    return true;
  }
};

// Whether the bytes of two tensors' elements can overlap (both have elements).
bool may_share_memory(const Tensor& a, const Geometry& ga, const Tensor& b, const Geometry& gb) {
  if (ga.numel == 0 || gb.numel == 0) return false;
  const int64_t element = int64_t(a.element_size());
  const auto base_a = int64_t(reinterpret_cast<uintptr_t>(a.const_data_ptr()));
  const auto base_b = int64_t(reinterpret_cast<uintptr_t>(b.const_data_ptr()));
  const auto [a_low, a_high] = ga.element_span();
  const auto [b_low, b_high] = gb.element_span();
  return base_a + a_low * element < base_b + b_high * element &&
         base_b + b_low * element < base_a + a_high * element;
}

// ---- Walking any layout without a copy, as TensorIterator does: the dimension order comes
// from the operands' strides, and the StridedLayout (torch_binding.h) is that order with
// size-1 dimensions dropped and contiguous neighbours merged.

// Dimensions innermost first, ordered by the strides of `operands` (the first one decides
// unless it is ambiguous): TensorIterator's reorder_dimensions. A stride of 0 (a broadcast)
// decides nothing; between equal strides the smaller size goes inside.
void stride_order(const Geometry* const* operands, int count, std::vector<int64_t>& order) {
  const Geometry& shape = *operands[0];
  order.resize(size_t(shape.dim));
  for (int64_t i = 0; i < shape.dim; ++i) order[size_t(i)] = shape.dim - 1 - i;
  const auto should_swap = [&](int64_t d0, int64_t d1) {
    for (int k = 0; k < count; ++k) {
      const int64_t s0 = operands[k]->strides[d0], s1 = operands[k]->strides[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape.sizes[d0] > shape.sizes[d1]) return 1;
    }
    return 0;
  };
  // Insertion sort that stops at the first "keep": the comparison is not a total order.
  for (int64_t i = 1; i < shape.dim; ++i) {
    for (int64_t d1 = i, d0 = i - 1; d0 >= 0; --d0) {
      const int comparison = should_swap(order[size_t(d0)], order[size_t(d1)]);
      if (comparison < 0) break;
      if (comparison > 0) {
        std::swap(order[size_t(d0)], order[size_t(d1)]);
        d1 = d0;
      }
    }
  }
}

// The walk over `operands` (the output first), ordered by their strides in that priority.
// nullopt when more than StridedLayout::kMaxDims dimensions remain after merging.
std::optional<StridedLayout> strided_layout(const Geometry* const* operands, int count) {
  std::vector<int64_t> order;
  stride_order(operands, count, order);
  const Geometry& shape = *operands[0];
  StridedLayout layout;
  int32_t dims = 0;
  for (const int64_t d : order) {
    if (shape.sizes[d] == 1) continue;
    if (dims > 0) {  // merge d into the dimension inside it where every operand allows
      const int32_t inner = dims - 1;
      bool contiguous = true;
      for (int k = 0; k < count; ++k) {
        contiguous = contiguous &&
                     layout.sizes[inner] * layout.strides[k][inner] == operands[k]->strides[d];
      }
      if (contiguous) {
        layout.sizes[inner] *= shape.sizes[d];
        continue;
      }
    }
    if (dims == StridedLayout::kMaxDims) return std::nullopt;
    layout.sizes[dims] = shape.sizes[d];
    for (int k = 0; k < count; ++k) layout.strides[k][dims] = operands[k]->strides[d];
    ++dims;
  }
  if (dims == 0) {  // one element
    layout.sizes[0] = 1;
    dims = 1;
  }
  layout.dims = dims;
  return layout;
}

// An uninitialised tensor like t: t's strides when t is dense (so the result keeps t's
// layout), else dense in t's stride order, as torch.relu(t) allocates (empty_like infers
// those strides, as TensorIterator does).
Tensor empty_with_layout_of(const Tensor& t, const Geometry& g) {
  if (!g.dense) return torch::stable::empty_like(t);
  // aoti_torch_empty_strided is one C call; torch::stable::empty_like goes through the
  // boxed dispatcher, measurably slower at small sizes.
  AtenTensorHandle handle = nullptr;
  if (aoti_torch_empty_strided(g.dim, g.sizes, g.strides, g.dtype_code, g.device_type,
                               g.device_index, &handle) != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error("relu: could not allocate the result");
  }
  return Tensor(handle);
}

// A dense copy of t in row-major order, sharing no memory with t.
Tensor contiguous_copy(const Tensor& t) {
  Tensor copy = torch::stable::new_empty(t, t.sizes());
  torch::stable::copy_(copy, t);
  return copy;
}

// ---- Backends: the flat passes of each device type this build serves.
// kWalksLayouts: the backend walks a StridedLayout itself (strided_forward/backward).
struct CpuBackend {
  static constexpr bool kWalksLayouts = true;
  static void strided_forward(ScalarType dtype, const void* in, void* out,
                              const StridedLayout& layout, int32_t) {
    relu_strided_cpu(dtype, in, out, layout);
  }
  static void strided_backward(ScalarType dtype, const void* grad, const void* result,
                               void* grad_in, const StridedLayout& layout, int32_t) {
    relu_backward_strided_cpu(dtype, grad, result, grad_in, layout);
  }
  static void forward(ScalarType dtype, const void* in, void* out, int64_t n, int32_t) {
    relu_flat_cpu(dtype, in, out, n);
  }
  static void backward(ScalarType dtype, const void* grad, const void* result, void* grad_in,
                       int64_t n, int32_t) {
    relu_backward_flat_cpu(dtype, grad, result, grad_in, n);
  }
};

#if defined(CUDA_KERNEL)
struct CudaBackend {
  static constexpr bool kWalksLayouts = true;
  static void strided_forward(ScalarType dtype, const void* in, void* out,
                              const StridedLayout& layout, int32_t device) {
    relu_strided_cuda(dtype, in, out, layout, device);
  }
  static void strided_backward(ScalarType dtype, const void* grad, const void* result,
                               void* grad_in, const StridedLayout& layout, int32_t device) {
    relu_backward_strided_cuda(dtype, grad, result, grad_in, layout, device);
  }
  static void forward(ScalarType dtype, const void* in, void* out, int64_t n, int32_t device) {
    relu_flat_cuda(dtype, in, out, n, device);
  }
  static void backward(ScalarType dtype, const void* grad, const void* result, void* grad_in,
                       int64_t n, int32_t device) {
    relu_backward_flat_cuda(dtype, grad, result, grad_in, n, device);
  }
};
#endif

#if defined(XPU_KERNEL)
// Flat passes only (no SYCL compiler here to build and no device to run a walk): other
// layouts go through dense copies.
struct XpuBackend {
  static constexpr bool kWalksLayouts = false;
  static void forward(ScalarType dtype, const void* in, void* out, int64_t n, int32_t device) {
    relu_flat_xpu(dtype, in, out, n, device);
  }
  static void backward(ScalarType dtype, const void* grad, const void* result, void* grad_in,
                       int64_t n, int32_t device) {
    relu_backward_flat_xpu(dtype, grad, result, grad_in, n, device);
  }
};
#endif

template <typename Backend>
void run_forward(const Tensor& x, const Geometry& gx, Tensor& out) {
  Backend::forward(gx.dtype, x.const_data_ptr(), out.mutable_data_ptr(), gx.numel,
                   gx.device_index);
}

void check_supported_dtype(const Geometry& x) {
  if (!relu_kernel::is_supported(x.dtype)) {
    fail("relu: x has dtype " + dtype_name(x.dtype) + "; supported dtypes are " +
         relu_kernel::kSupportedDtypes);
  }
}

void check_relu_args(const Tensor& out, const Geometry& go, const Tensor& x, const Geometry& gx) {
  check_supported_dtype(gx);
  if (go.dtype != gx.dtype) {
    fail("relu: out has dtype " + dtype_name(go.dtype) + " but x has dtype " +
         dtype_name(gx.dtype) + "; out must have x's dtype");
  }
  if (!go.same_device(gx)) {
    fail("relu: out is on " + go.device() + " but x is on " + gx.device() +
         "; out must be on x's device");
  }
  if (!go.same_shape(gx)) {
    fail("relu: out has shape " + go.shape() + " but x has shape " + gx.shape() +
         "; out must have x's shape (it is never resized)");
  }
  if (go.has_repeated_elements()) {
    fail("relu: out has elements that share memory (an expand()ed or stride-0 view); "
         "pass a tensor whose elements are distinct");
  }
  // Two dense tensors that share memory must be the very same elements (in place); for
  // strided ones the pass below reads all of x before writing out, so any sharing is safe.
  if (go.dense && gx.dense && may_share_memory(out, go, x, gx) &&
      !(out.const_data_ptr() == x.const_data_ptr() && go.same_strides(gx))) {
    fail("relu: out partially overlaps x; pass out=x for in place, or a tensor that does "
         "not share x's memory");
  }
}

// out = relu(x) for x and out of any layouts, walked in out's stride order then x's, with no
// copy. Dense copies only where the walk cannot go: more than StridedLayout::kMaxDims
// dimensions left after merging, or a backend without a walk (XPU).
template <typename Backend>
void walk_forward(const Tensor& x, const Geometry& gx, Tensor& out, const Geometry& go) {
  if constexpr (Backend::kWalksLayouts) {
    const Geometry* operands[] = {&go, &gx};
    if (const std::optional<StridedLayout> layout = strided_layout(operands, 2)) {
      Backend::strided_forward(gx.dtype, x.const_data_ptr(), out.mutable_data_ptr(), *layout,
                               gx.device_index);
      return;
    }
  }
  Tensor dense = contiguous_copy(x);
  Backend::forward(gx.dtype, dense.const_data_ptr(), dense.mutable_data_ptr(), gx.numel,
                   gx.device_index);
  torch::stable::copy_(out, dense);
}

template <typename Backend>
void relu_out_checked(Tensor& out, const Geometry& go, const Tensor& x, const Geometry& gx) {
  if (gx.numel == 0) return;
  if (gx.same_dense_layout(go) && go.dense) {
    // Contiguous, channels-last, permuted-dense, and in place (out is x): one flat pass.
    run_forward<Backend>(x, gx, out);
    return;
  }
  // Each element is read before it is written, so out may be x itself in any layout. Any
  // other sharing (interleaved views of one buffer, which the checks let through) would let
  // the walk overwrite elements of x it has yet to read: x is copied first, there only.
  const bool in_place = x.const_data_ptr() == out.const_data_ptr() && gx.same_strides(go);
  if (!in_place && may_share_memory(x, gx, out, go)) {
    const Tensor copy = contiguous_copy(x);
    walk_forward<Backend>(copy, Geometry(copy), out, go);
    return;
  }
  walk_forward<Backend>(x, gx, out, go);
}

template <typename Backend>
void relu_out_impl(Tensor out, Tensor x) {
  const Geometry go(out), gx(x);
  check_relu_args(out, go, x, gx);
  relu_out_checked<Backend>(out, go, x, gx);
}

template <typename Backend>
Tensor relu_impl(Tensor x) {
  const Geometry gx(x);
  check_supported_dtype(gx);
  Tensor out = empty_with_layout_of(x, gx);
  relu_out_checked<Backend>(out, gx.dense ? gx : Geometry(out), x, gx);
  return out;
}

template <typename Backend>
Tensor relu_backward_impl(Tensor grad_out, Tensor result) {
  const Geometry gg(grad_out), gr(result);
  if (!relu_kernel::is_floating(gr.dtype)) {
    fail("relu_backward: result has dtype " + dtype_name(gr.dtype) +
         "; gradients exist for float32, float16, bfloat16, float64 only");
  }
  if (gg.dtype != gr.dtype) {
    fail("relu_backward: grad_out has dtype " + dtype_name(gg.dtype) + " but result has dtype " +
         dtype_name(gr.dtype));
  }
  if (!gg.same_device(gr)) {
    fail("relu_backward: grad_out is on " + gg.device() + " but result is on " + gr.device());
  }
  if (!gg.same_shape(gr)) {
    fail("relu_backward: grad_out has shape " + gg.shape() + " but result has shape " +
         gr.shape());
  }
  // The gradient takes result's layout (dense in its stride order when result is not dense),
  // and a fresh tensor shares memory with neither input.
  Tensor grad_in = empty_with_layout_of(result, gr);
  if (gr.numel == 0) return grad_in;
  if (gr.same_dense_layout(gg)) {
    Backend::backward(gr.dtype, grad_out.const_data_ptr(), result.const_data_ptr(),
                      grad_in.mutable_data_ptr(), gr.numel, gr.device_index);
    return grad_in;
  }
  const Geometry gi = gr.dense ? gr : Geometry(grad_in);
  if constexpr (Backend::kWalksLayouts) {
    const Geometry* operands[] = {&gi, &gg, &gr};
    if (const std::optional<StridedLayout> layout = strided_layout(operands, 3)) {
      Backend::strided_backward(gr.dtype, grad_out.const_data_ptr(), result.const_data_ptr(),
                                grad_in.mutable_data_ptr(), *layout, gr.device_index);
      return grad_in;
    }
  }
  // Beyond the walk: both inputs in grad_in's layout first.
  Tensor grad = empty_with_layout_of(grad_in, gi), res = empty_with_layout_of(grad_in, gi);
  torch::stable::copy_(grad, grad_out);
  torch::stable::copy_(res, result);
  Backend::backward(gr.dtype, grad.const_data_ptr(), res.const_data_ptr(),
                    grad_in.mutable_data_ptr(), gr.numel, gr.device_index);
  return grad_in;
}

std::string cpu_isa() { return relu_cpu_isa(); }

}  // namespace

STABLE_TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor x) -> Tensor");
  ops.def("relu_out(Tensor(a!) out, Tensor x) -> ()");
  ops.def("relu_backward(Tensor grad_out, Tensor result) -> Tensor");
  ops.def("cpu_isa() -> str");
}

STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CompositeExplicitAutograd, ops) {
  ops.impl("cpu_isa", TORCH_BOX(&cpu_isa));
}

STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops) {
  ops.impl("relu", TORCH_BOX(&relu_impl<CpuBackend>));
  ops.impl("relu_out", TORCH_BOX(&relu_out_impl<CpuBackend>));
  ops.impl("relu_backward", TORCH_BOX(&relu_backward_impl<CpuBackend>));
}

#if defined(CUDA_KERNEL)
STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, ops) {
  ops.impl("relu", TORCH_BOX(&relu_impl<CudaBackend>));
  ops.impl("relu_out", TORCH_BOX(&relu_out_impl<CudaBackend>));
  ops.impl("relu_backward", TORCH_BOX(&relu_backward_impl<CudaBackend>));
}
#endif

#if defined(XPU_KERNEL)
STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, XPU, ops) {
  ops.impl("relu", TORCH_BOX(&relu_impl<XpuBackend>));
  ops.impl("relu_out", TORCH_BOX(&relu_out_impl<XpuBackend>));
  ops.impl("relu_backward", TORCH_BOX(&relu_backward_impl<XpuBackend>));
}
#endif

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
