// The relu ops on the torch stable ABI: op bodies and registration, shared by every backend.
// Built against torch/csrc/stable and torch/headeronly only, with TORCH_TARGET_VERSION =
// 2.11, so one binary loads on every torch from 2.11 on. The other jobs of the binding, one
// file each: argument_checks.h (what a user can get wrong, rejected before any write),
// tensor_geometry.h (what a tensor is: sizes, strides, device, overlap), layout_plan.h (the
// one stride order: density, a result's layout, the walk over any layout), backends.h (one
// adapter per device type). Autograd lives in Python
// (torch-ext/relu/functions.py): the stable ABI has no C++ autograd API.
//
//   relu(Tensor x) -> Tensor                          allocating
//   relu_out(Tensor(a!) out, Tensor x) -> ()          writes out; out may be x (in place)
//   relu_backward(Tensor grad_out, Tensor result) -> Tensor     grad_out * (result > 0)
//   relu_squared, relu_squared_out: the same for x > 0 ? x*x : 0 (float dtypes)
//   relu_squared_backward(Tensor grad_out, Tensor x) -> Tensor  x > 0 ? 2x * grad_out : 0
//   cpu_isa() -> str, dtype_table() -> str            what this build runs and takes
//
// Every build registers the CPU kernels; a CUDA build registers its CUDA kernels beside
// them, so one variant serves tensors on every device of the machine, as torch ops do.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "registration.h"
#include "relu-common/relu_dtypes.h"
#include "torch-ext/argument_checks.h"
#include "torch-ext/backends.h"
#include "torch-ext/layout_plan.h"
#include "torch-ext/tensor_geometry.h"

namespace {

using namespace relu_binding;

// Every allocation is one aoti_torch_empty_strided call, never torch::stable::empty_like or
// new_empty: those go through the boxed dispatcher (torch_call_dispatcher), whose failure path
// crashed the process (SIGSEGV) on a CUDA out-of-memory under torch 2.11 on the H200, where
// aoti_torch_empty_strided returns an error code that reaches Python as torch's own
// OutOfMemoryError (functions.py, _allocation.py). It is also one C call, not a dispatch.
Tensor empty_strided(const Geometry& g, const int64_t* strides) {
  AtenTensorHandle handle = nullptr;
  if (aoti_torch_empty_strided(g.dim, g.sizes, strides, g.dtype_code, g.device_type,
                               g.device_index, &handle) != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error("relu: could not allocate the result");
  }
  return Tensor(handle);
}

// An uninitialised tensor of g's shape, as torch.empty_like(t) lays it out (and so as
// torch.relu(t) allocates): t's strides when t is dense, else dense in t's stride order
// (layout_plan.h).
Tensor empty_with_layout_of(const Geometry& g) {
  if (g.dense) return empty_strided(g, g.strides);
  return empty_strided(g, dense_strides_like(g.dim, g.sizes, g.strides).data());
}

// A dense copy of t (geometry g) in row-major order, sharing no memory with t.
Tensor contiguous_copy(const Tensor& t, const Geometry& g) {
  DimArray strides(g.dim);
  int64_t stride = 1;
  for (int64_t d = g.dim; d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(g.sizes[d], 1);
  }
  Tensor copy = empty_strided(g, strides.data());
  torch::stable::copy_(copy, t);
  return copy;
}

// out = activation(x) for x and out of any layouts, walked in out's stride order then x's,
// with no copy. Dense copies only where the walk cannot go: more than
// StridedLayout::kMaxDims dimensions left after merging, or a backend without a walk (XPU).
template <typename Backend>
void walk_forward(Activation activation, const Tensor& x, const Geometry& gx, Tensor& out,
                  const Geometry& go) {
  if constexpr (Backend::kWalksLayouts) {
    const int64_t* strides[] = {go.strides, gx.strides};
    if (const std::optional<StridedLayout> layout = strided_layout(go.dim, go.sizes, strides, 2)) {
      Backend::strided_forward(activation, gx.dtype, x.const_data_ptr(), out.mutable_data_ptr(),
                               *layout, gx.device_index);
      return;
    }
  }
  Tensor dense = contiguous_copy(x, gx);
  Backend::forward(activation, gx.dtype, dense.const_data_ptr(), dense.mutable_data_ptr(),
                   gx.numel, gx.device_index);
  torch::stable::copy_(out, dense);
}

template <typename Backend>
void forward_out_checked(Activation activation, Tensor& out, const Geometry& go, const Tensor& x,
                         const Geometry& gx) {
  if (gx.numel == 0) return;
  if (gx.same_dense_layout(go) && go.dense) {
    // Contiguous, channels-last, permuted-dense, and in place (out is x): one flat pass.
    Backend::forward(activation, gx.dtype, x.const_data_ptr(), out.mutable_data_ptr(), gx.numel,
                     gx.device_index);
    return;
  }
  // Each element is read before it is written, so out may be x itself in any layout. Any
  // other sharing (interleaved views of one buffer, which the checks let through) would let
  // the walk overwrite elements of x it has yet to read: x is copied first, there only.
  const bool in_place = x.const_data_ptr() == out.const_data_ptr() && gx.same_strides(go);
  if (!in_place && may_share_memory(x, gx, out, go)) {
    const Tensor copy = contiguous_copy(x, gx);
    walk_forward<Backend>(activation, copy, Geometry(copy), out, go);
    return;
  }
  walk_forward<Backend>(activation, x, gx, out, go);
}

template <typename Backend, Activation kActivation>
void forward_out_impl(Tensor out, Tensor x) {
  const Geometry go(out), gx(x);
  check_forward_args(kActivation, out, go, x, gx);
  forward_out_checked<Backend>(kActivation, out, go, x, gx);
}

template <typename Backend, Activation kActivation>
Tensor forward_impl(Tensor x) {
  const Geometry gx(x);
  check_supported_dtype(kActivation, gx);
  Tensor out = empty_with_layout_of(gx);
  forward_out_checked<Backend>(kActivation, out, gx.dense ? gx : Geometry(out), x, gx);
  return out;
}

// grad_in from grad_out and the saved tensor (relu's result, relu_squared's x), in the saved
// tensor's layout.
template <typename Backend, Activation kActivation>
Tensor backward_impl(Tensor grad_out, Tensor saved) {
  const Geometry gg(grad_out), gs(saved);
  check_backward_args(kActivation, gg, gs);
  // The gradient takes saved's layout (dense in its stride order when saved is not dense),
  // and a fresh tensor shares memory with neither input.
  Tensor grad_in = empty_with_layout_of(gs);
  if (gs.numel == 0) return grad_in;
  if (gs.same_dense_layout(gg)) {
    Backend::backward(kActivation, gs.dtype, grad_out.const_data_ptr(), saved.const_data_ptr(),
                      grad_in.mutable_data_ptr(), gs.numel, gs.device_index);
    return grad_in;
  }
  const Geometry gi = gs.dense ? gs : Geometry(grad_in);
  if constexpr (Backend::kWalksLayouts) {
    const int64_t* strides[] = {gi.strides, gg.strides, gs.strides};
    if (const std::optional<StridedLayout> layout = strided_layout(gi.dim, gi.sizes, strides, 3)) {
      Backend::strided_backward(kActivation, gs.dtype, grad_out.const_data_ptr(),
                                saved.const_data_ptr(), grad_in.mutable_data_ptr(), *layout,
                                gs.device_index);
      return grad_in;
    }
  }
  // Beyond the walk: both inputs in grad_in's layout first.
  Tensor grad = empty_with_layout_of(gi), kept = empty_with_layout_of(gi);
  torch::stable::copy_(grad, grad_out);
  torch::stable::copy_(kept, saved);
  Backend::backward(kActivation, gs.dtype, grad.const_data_ptr(), kept.const_data_ptr(),
                    grad_in.mutable_data_ptr(), gs.numel, gs.device_index);
  return grad_in;
}

// Every op of one backend, registered under one dispatch key.
template <typename Backend, typename Library>
void register_kernels(Library& ops) {
  constexpr Activation kRelu = Activation::kRelu, kSquared = Activation::kReluSquared;
  ops.impl("relu", TORCH_BOX((&forward_impl<Backend, kRelu>)));
  ops.impl("relu_out", TORCH_BOX((&forward_out_impl<Backend, kRelu>)));
  ops.impl("relu_backward", TORCH_BOX((&backward_impl<Backend, kRelu>)));
  ops.impl("relu_squared", TORCH_BOX((&forward_impl<Backend, kSquared>)));
  ops.impl("relu_squared_out", TORCH_BOX((&forward_out_impl<Backend, kSquared>)));
  ops.impl("relu_squared_backward", TORCH_BOX((&backward_impl<Backend, kSquared>)));
}

std::string cpu_isa() { return relu_cpu_isa(); }

// The dtype table (relu-common/relu_dtypes.h) for the Python package, read once at import.
std::string dtype_table() { return relu_kernel::dtype_table_text(); }

}  // namespace

STABLE_TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor x) -> Tensor");
  ops.def("relu_out(Tensor(a!) out, Tensor x) -> ()");
  ops.def("relu_backward(Tensor grad_out, Tensor result) -> Tensor");
  ops.def("relu_squared(Tensor x) -> Tensor");
  ops.def("relu_squared_out(Tensor(a!) out, Tensor x) -> ()");
  ops.def("relu_squared_backward(Tensor grad_out, Tensor x) -> Tensor");
  ops.def("cpu_isa() -> str");
  ops.def("dtype_table() -> str");
}

STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CompositeExplicitAutograd, ops) {
  ops.impl("cpu_isa", TORCH_BOX(&cpu_isa));
  ops.impl("dtype_table", TORCH_BOX(&dtype_table));
}

STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops) {
  register_kernels<CpuBackend>(ops);
}

#if defined(CUDA_KERNEL)
STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, ops) {
  register_kernels<CudaBackend>(ops);
}
#endif

#if defined(XPU_KERNEL)
STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, XPU, ops) {
  register_kernels<XpuBackend>(ops);
}
#endif

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
