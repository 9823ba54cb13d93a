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
//   relu_and_mul, relu_squared_and_mul (+ _out, _backward): x [..., 2d] -> [..., d], gated_element.h
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
// A tensor of g's dtype and device with `sizes` and `strides` (g's own sizes by default).
Tensor empty_strided(const Geometry& g, const int64_t* sizes, const int64_t* strides) {
  AtenTensorHandle handle = nullptr;
  if (aoti_torch_empty_strided(g.dim, sizes, strides, g.dtype_code, g.device_type,
                               g.device_index, &handle) != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error("relu: could not allocate the result");
  }
  return Tensor(handle);
}

Tensor empty_strided(const Geometry& g, const int64_t* strides) {
  return empty_strided(g, g.sizes, strides);
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

// ---- The gated ops: x [..., 2d] read as its halves a = x[..., :d] and b = x[..., d:], two
// input streams of one walk; no copy on a backend that walks layouts.

// The halves' data pointers: b starts d elements along x's last dimension.
struct Halves {
  const void* a;
  const void* b;
};

inline Halves halves_of(const Tensor& x, const Geometry& gx, int64_t d) {
  const char* a = static_cast<const char*>(x.const_data_ptr());
  return {a, a + d * gx.strides[gx.dim - 1] * int64_t(x.element_size())};
}

// `walk(layout)` over the operands' strides, sizes those of a half. Where the walk cannot go
// (more than kMaxDims dimensions after merging, or a backend without a walk: XPU), dense copies
// of the inputs go through it instead as one row; `dense` makes them and returns what to copy
// back, if anything.
template <typename Backend, typename Walk, typename Dense>
void walk_halves(const DimArray& sizes, const int64_t* const* strides, int operands,
                 const Walk& walk, const Dense& dense) {
  if constexpr (Backend::kWalksLayouts) {
    if (const std::optional<StridedLayout> layout =
            strided_layout(sizes.size(), sizes.data(), strides, operands)) {
      walk(*layout);
      return;
    }
  }
  dense();
}

// A dense copy of one half of x (the elements [start, start + d) of its last dimension).
Tensor dense_half(Tensor x, const Geometry& gx, int64_t start, int64_t d) {
  const Tensor half = torch::stable::narrow(x, gx.dim - 1, start, d);
  return contiguous_copy(half, Geometry(half));
}

StridedLayout row_layout(int64_t n, int operands) {
  StridedLayout layout;
  layout.dims = 1;
  layout.sizes[0] = n;
  for (int k = 0; k < operands; ++k) layout.strides[k][0] = 1;
  return layout;
}

template <typename Backend>
void gated_out_checked(Gate gate, Tensor& out, const Geometry& go, const Tensor& x,
                       const Geometry& gx, double threshold) {
  if (go.numel == 0) return;
  const DimArray sizes = half_sizes(gx);
  const int64_t d = sizes[gx.dim - 1];
  const Halves h = halves_of(x, gx, d);
  const int64_t* strides[] = {go.strides, gx.strides, gx.strides};
  walk_halves<Backend>(
      sizes, strides, 3,
      [&](const StridedLayout& layout) {
        Backend::gated_forward(gate, gx.dtype, h.a, h.b, out.mutable_data_ptr(), layout,
                               threshold, gx.device_index);
      },
      [&] {
        const Tensor a = dense_half(x, gx, 0, d), b = dense_half(x, gx, d, d);
        Tensor result = empty_strided(Geometry(a), Geometry(a).strides);
        Backend::gated_forward(gate, gx.dtype, a.const_data_ptr(), b.const_data_ptr(),
                               result.mutable_data_ptr(), row_layout(go.numel, 3), threshold,
                               gx.device_index);
        torch::stable::copy_(out, result);
      });
}

template <typename Backend, Gate kGate>
void gated_out_impl(Tensor out, Tensor x, double threshold) {
  const Geometry go(out), gx(x);
  check_gated_x(kGate, gx);
  check_gated_out(kGate, out, go, x, gx);
  gated_out_checked<Backend>(kGate, out, go, x, gx, threshold);
}

template <typename Backend, Gate kGate>
Tensor gated_impl(Tensor x, double threshold) {
  const Geometry gx(x);
  check_gated_x(kGate, gx);
  // The result in x's stride order, dense, as F.relu(a) * b lays it out.
  const DimArray sizes = half_sizes(gx);
  Tensor out = empty_strided(gx, sizes.data(), dense_strides_like(gx.dim, sizes.data(), gx.strides).data());
  gated_out_checked<Backend>(kGate, out, Geometry(out), x, gx, threshold);
  return out;
}

// grad_x [..., 2d] in x's layout: grad_a from (grad_out, a, b), then grad_b from (grad_out, a).
template <typename Backend, Gate kGate>
Tensor gated_backward_impl(Tensor grad_out, Tensor x, double threshold) {
  const Geometry gg(grad_out), gx(x);
  check_gated_x(kGate, gx);
  check_gated_half(kGate, "grad_out", gg, gx);
  Tensor grad_x = empty_with_layout_of(gx);
  if (gg.numel == 0) return grad_x;
  const Geometry gi = gx.dense ? gx : Geometry(grad_x);
  const DimArray sizes = half_sizes(gx);
  const int64_t d = sizes[gx.dim - 1];
  const Halves h = halves_of(x, gx, d);
  char* grad_a = static_cast<char*>(grad_x.mutable_data_ptr());
  char* grad_b = grad_a + d * gi.strides[gi.dim - 1] * int64_t(x.element_size());
  const int64_t* strides[] = {gi.strides, gg.strides, gx.strides, gx.strides};
  walk_halves<Backend>(
      sizes, strides, 4,
      [&](const StridedLayout& layout) {
        Backend::gated_backward(kGate, gx.dtype, grad_out.const_data_ptr(), h.a, h.b, grad_a,
                                grad_b, layout, threshold, gx.device_index);
      },
      [&] {
        const Tensor a = dense_half(x, gx, 0, d), b = dense_half(x, gx, d, d);
        const Tensor g = contiguous_copy(grad_out, gg);
        const Geometry ga(a);
        Tensor da = empty_strided(ga, ga.strides), db = empty_strided(ga, ga.strides);
        Backend::gated_backward(kGate, gx.dtype, g.const_data_ptr(), a.const_data_ptr(),
                                b.const_data_ptr(), da.mutable_data_ptr(), db.mutable_data_ptr(),
                                row_layout(gg.numel, 4), threshold, gx.device_index);
        Tensor grad_x_a = torch::stable::narrow(grad_x, gx.dim - 1, 0, d);
        Tensor grad_x_b = torch::stable::narrow(grad_x, gx.dim - 1, d, d);
        torch::stable::copy_(grad_x_a, da);
        torch::stable::copy_(grad_x_b, db);
      });
  return grad_x;
}

// relu_squared_and_mul's schemas have no threshold: its gate has none.
template <typename Backend>
Tensor squared_gated_impl(Tensor x) {
  return gated_impl<Backend, Gate::kReluSquaredAndMul>(x, 0.0);
}
template <typename Backend>
void squared_gated_out_impl(Tensor out, Tensor x) {
  gated_out_impl<Backend, Gate::kReluSquaredAndMul>(out, x, 0.0);
}
template <typename Backend>
Tensor squared_gated_backward_impl(Tensor grad_out, Tensor x) {
  return gated_backward_impl<Backend, Gate::kReluSquaredAndMul>(grad_out, x, 0.0);
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
  constexpr Gate kReGLU = Gate::kReluAndMul;
  ops.impl("relu_and_mul", TORCH_BOX((&gated_impl<Backend, kReGLU>)));
  ops.impl("relu_and_mul_out", TORCH_BOX((&gated_out_impl<Backend, kReGLU>)));
  ops.impl("relu_and_mul_backward", TORCH_BOX((&gated_backward_impl<Backend, kReGLU>)));
  ops.impl("relu_squared_and_mul", TORCH_BOX((&squared_gated_impl<Backend>)));
  ops.impl("relu_squared_and_mul_out", TORCH_BOX((&squared_gated_out_impl<Backend>)));
  ops.impl("relu_squared_and_mul_backward", TORCH_BOX((&squared_gated_backward_impl<Backend>)));
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
  ops.def("relu_and_mul(Tensor x, float threshold) -> Tensor");
  ops.def("relu_and_mul_out(Tensor(a!) out, Tensor x, float threshold) -> ()");
  ops.def("relu_and_mul_backward(Tensor grad_out, Tensor x, float threshold) -> Tensor");
  ops.def("relu_squared_and_mul(Tensor x) -> Tensor");
  ops.def("relu_squared_and_mul_out(Tensor(a!) out, Tensor x) -> ()");
  ops.def("relu_squared_and_mul_backward(Tensor grad_out, Tensor x) -> Tensor");
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
