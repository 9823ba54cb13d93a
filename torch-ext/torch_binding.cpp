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

std::string shape_of(const Tensor& t) {
  std::string text = "[";
  const auto sizes = t.sizes();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(sizes[d]);
  }
  return text + "]";
}

std::string device_name(const Tensor& t) {
  switch (t.device().type()) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda:" + std::to_string(int(t.get_device_index()));
    case DeviceType::XPU: return "xpu:" + std::to_string(int(t.get_device_index()));
    default: return "device type " + std::to_string(int(t.device().type()));
  }
}

bool same_device(const Tensor& a, const Tensor& b) {
  return a.device().type() == b.device().type() &&
         a.get_device_index() == b.get_device_index();
}

// ---- Layout geometry, rebuilt from sizes and strides (the stable ABI has no overlap or
// memory-format helpers). Tensors up to kInlineDims dimensions need no allocation.
constexpr size_t kInlineDims = 16;

// Dimensions with more than one element, in increasing stride order.
struct OrderedDims {
  std::array<int64_t, kInlineDims> inline_dims;
  std::vector<int64_t> heap_dims;
  int64_t* dims = nullptr;
  size_t count = 0;

  explicit OrderedDims(const Tensor& t) {
    const auto sizes = t.sizes();
    const auto strides = t.strides();
    if (sizes.size() > kInlineDims) {
      heap_dims.resize(sizes.size());
      dims = heap_dims.data();
    } else {
      dims = inline_dims.data();
    }
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] != 1) dims[count++] = int64_t(d);
    }
    std::stable_sort(dims, dims + count, [&](int64_t a, int64_t b) {
      return strides[size_t(a)] < strides[size_t(b)];
    });
  }
};

// Every element at a distinct address and no gaps: some permutation of the dimensions is
// contiguous (torch's is_non_overlapping_and_dense).
bool is_dense(const Tensor& t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const OrderedDims order(t);
  int64_t expected = 1;
  for (size_t i = 0; i < order.count; ++i) {
    const size_t d = size_t(order.dims[i]);
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// Same element order in memory (a flat pass over both is exact), given `a` is dense.
bool same_layout(const Tensor& a, const Tensor& b) {
  const auto sizes = a.sizes();
  const auto a_strides = a.strides();
  const auto b_strides = b.strides();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && a_strides[d] != b_strides[d]) return false;
  }
  return true;
}

bool same_dense_layout(const Tensor& a, const Tensor& b) { return is_dense(a) && same_layout(a, b); }

// Two elements of `t` at one address: a dimension of stride 0 and size > 1 (an expand()).
// Other self-overlapping layouts need as_strided, which torch's own check does not catch
// either (it answers "too hard"); they are not rejected here.
bool has_repeated_elements(const Tensor& t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1 && strides[d] == 0) return true;
  }
  return false;
}

// [first, last) bytes that `t`'s elements can touch; t.numel() > 0.
struct ByteSpan {
  uintptr_t first;
  uintptr_t last;
};

ByteSpan byte_span(const Tensor& t) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  int64_t low = 0, high = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t reach = (sizes[d] - 1) * strides[d];
    (reach < 0 ? low : high) += reach;
  }
  const auto element = int64_t(t.element_size());
  const auto base = reinterpret_cast<uintptr_t>(t.const_data_ptr());
  return ByteSpan{uintptr_t(int64_t(base) + low * element),
                  uintptr_t(int64_t(base) + (high + 1) * element)};
}

bool may_share_memory(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  const ByteSpan sa = byte_span(a), sb = byte_span(b);
  return sa.first < sb.last && sb.first < sa.last;
}

// An uninitialised tensor on t's device: t's strides when t is dense (so the result keeps
// t's layout), else torch's own empty_like choice.
Tensor empty_with_layout_of(const Tensor& t) {
  if (!is_dense(t)) return torch::stable::empty_like(t);
  // aoti_torch_empty_strided is one C call; torch::stable::empty_like goes through the
  // boxed dispatcher, measurably slower at small sizes.
  AtenTensorHandle handle = nullptr;
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  int32_t dtype = 0, device_type = 0;
  aoti_torch_get_dtype(t.get(), &dtype);
  aoti_torch_get_device_type(t.get(), &device_type);
  if (aoti_torch_empty_strided(int64_t(sizes.size()), sizes.data(), strides.data(), dtype,
                               device_type, t.get_device_index(), &handle) != AOTI_TORCH_SUCCESS) {
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
  static constexpr DeviceType kDevice = DeviceType::CPU;
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
  static constexpr DeviceType kDevice = DeviceType::CUDA;
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
  static constexpr DeviceType kDevice = DeviceType::XPU;
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
void run_forward(const Tensor& x, Tensor& out) {
  Backend::forward(x.scalar_type(), x.const_data_ptr(), out.mutable_data_ptr(), x.numel(),
                   int32_t(x.get_device_index()));
}

void check_supported_dtype(const Tensor& x) {
  if (!relu_kernel::is_supported(x.scalar_type())) {
    fail("relu: x has dtype " + dtype_name(x.scalar_type()) +
               "; supported dtypes are " + relu_kernel::kSupportedDtypes);
  }
}

void check_relu_args(const Tensor& out, const Tensor& x) {
  check_supported_dtype(x);
  if (out.scalar_type() != x.scalar_type()) {
    fail("relu: out has dtype " + dtype_name(out.scalar_type()) + " but x has dtype " +
               dtype_name(x.scalar_type()) + "; out must have x's dtype");
  }
  if (!same_device(out, x)) {
    fail("relu: out is on " + device_name(out) + " but x is on " + device_name(x) +
               "; out must be on x's device");
  }
  const auto out_sizes = out.sizes();
  const auto x_sizes = x.sizes();
  if (!std::equal(out_sizes.begin(), out_sizes.end(), x_sizes.begin(), x_sizes.end())) {
    fail("relu: out has shape " + shape_of(out) + " but x has shape " + shape_of(x) +
               "; out must have x's shape (it is never resized)");
  }
  if (has_repeated_elements(out)) {
    fail("relu: out has elements that share memory (an expand()ed or stride-0 view); "
               "pass a tensor whose elements are distinct");
  }
  // Two dense tensors that share memory must be the very same elements (in place); for
  // strided ones the pass below reads all of x before writing out, so any sharing is safe.
  if (is_dense(out) && is_dense(x) && may_share_memory(out, x) &&
      !(out.const_data_ptr() == x.const_data_ptr() && same_layout(out, x))) {
    fail("relu: out partially overlaps x; pass out=x for in place, or a tensor that "
               "does not share x's memory");
  }
}

template <typename Backend>
void relu_out_checked(Tensor& out, const Tensor& x) {
  if (x.numel() == 0) return;
  if (same_dense_layout(x, out) && is_dense(out)) {
    // Contiguous, channels-last, permuted-dense, and in place (out is x): no copy.
    run_forward<Backend>(x, out);
    return;
  }
  // Strided x or out, or two different layouts. x is read in full into `src` before out is
  // written, so even an interleaved alias of x and out stays correct.
  const Tensor src = is_dense(x) && !may_share_memory(x, out) ? x : contiguous_copy(x);
  if (same_dense_layout(src, out)) {
    run_forward<Backend>(src, out);
    return;
  }
  Tensor dense = empty_with_layout_of(src);
  run_forward<Backend>(src, dense);
  torch::stable::copy_(out, dense);
}

template <typename Backend>
void relu_out_impl(Tensor out, Tensor x) {
  check_relu_args(out, x);
  relu_out_checked<Backend>(out, x);
}

template <typename Backend>
Tensor relu_impl(Tensor x) {
  check_supported_dtype(x);
  Tensor out = empty_with_layout_of(x);
  relu_out_checked<Backend>(out, x);
  return out;
}

template <typename Backend>
Tensor relu_backward_impl(Tensor grad_out, Tensor result) {
  const ScalarType dtype = result.scalar_type();
  if (!relu_kernel::is_floating(dtype)) {
    fail("relu_backward: result has dtype " + dtype_name(dtype) +
               "; gradients exist for float32, float16, bfloat16, float64 only");
  }
  if (grad_out.scalar_type() != dtype) {
    fail("relu_backward: grad_out has dtype " + dtype_name(grad_out.scalar_type()) +
               " but result has dtype " + dtype_name(dtype));
  }
  if (!same_device(grad_out, result)) {
    fail("relu_backward: grad_out is on " + device_name(grad_out) + " but result is on " +
               device_name(result));
  }
  const auto g_sizes = grad_out.sizes();
  const auto r_sizes = result.sizes();
  if (!std::equal(g_sizes.begin(), g_sizes.end(), r_sizes.begin(), r_sizes.end())) {
    fail("relu_backward: grad_out has shape " + shape_of(grad_out) +
               " but result has shape " + shape_of(result));
  }
  // One dense layout for all three (a copy only for strided or mixed layouts).
  const Tensor res = is_dense(result) ? result : contiguous_copy(result);
  Tensor grad_in = empty_with_layout_of(res);
  if (res.numel() == 0) return grad_in;
  Tensor grad = grad_out;
  if (!same_dense_layout(grad_out, res)) {
    grad = empty_with_layout_of(res);
    torch::stable::copy_(grad, grad_out);
  }
  Backend::backward(dtype, grad.const_data_ptr(), res.const_data_ptr(),
                    grad_in.mutable_data_ptr(), res.numel(), int32_t(res.get_device_index()));
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
