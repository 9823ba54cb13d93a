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

// An uninitialised tensor like t: t's strides when t is dense (so the result keeps t's
// layout), else torch's own empty_like choice.
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
struct CpuBackend {
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
struct XpuBackend {
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

template <typename Backend>
void relu_out_checked(Tensor& out, const Geometry& go, const Tensor& x, const Geometry& gx) {
  if (gx.numel == 0) return;
  if (gx.same_dense_layout(go) && go.dense) {
    // Contiguous, channels-last, permuted-dense, and in place (out is x): no copy.
    run_forward<Backend>(x, gx, out);
    return;
  }
  // Strided x or out, or two different layouts. x is read in full into `src` before out is
  // written, so even an interleaved alias of x and out stays correct.
  const bool x_usable = gx.dense && !may_share_memory(x, gx, out, go);
  const Tensor src = x_usable ? x : contiguous_copy(x);
  const Geometry gs = x_usable ? gx : Geometry(src);
  if (gs.same_dense_layout(go)) {
    run_forward<Backend>(src, gs, out);
    return;
  }
  Tensor dense = empty_with_layout_of(src, gs);
  run_forward<Backend>(src, gs, dense);
  torch::stable::copy_(out, dense);
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
  // One dense layout for all three (a copy only for strided or mixed layouts).
  const Tensor res = gr.dense ? result : contiguous_copy(result);
  const Geometry gres = gr.dense ? gr : Geometry(res);
  Tensor grad_in = empty_with_layout_of(res, gres);
  if (gres.numel == 0) return grad_in;
  Tensor grad = grad_out;
  if (!gres.same_dense_layout(gg)) {
    grad = empty_with_layout_of(res, gres);
    torch::stable::copy_(grad, grad_out);
  }
  Backend::backward(gres.dtype, grad.const_data_ptr(), res.const_data_ptr(),
                    grad_in.mutable_data_ptr(), gres.numel, gres.device_index);
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
