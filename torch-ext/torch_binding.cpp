// The relu ops on the torch stable ABI (TORCH_TARGET_VERSION 2.11, so one binary loads on
// every later torch): schemas, op bodies and registration, written once over Backend<Device>.
// Checks live in argument_checks.h, tensor facts in tensor_geometry.h, stride order and walks
// in layout_plan.h; autograd in Python (the stable ABI has none). Every build registers the
// CPU kernels, a GPU build its own beside them, so one variant serves every device.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "registration.h"
#include "relu-common/backend_entry_points.h"
#include "relu-common/relu_dtypes.h"
#include "torch-ext/argument_checks.h"
#include "torch-ext/layout_plan.h"
#include "torch-ext/tensor_geometry.h"

namespace {

using namespace relu_binding;

// Allocation is aoti_torch_empty_strided alone: its out-of-memory error reaches Python as
// torch's OutOfMemoryError, where empty_like's dispatcher path crashes the process.
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

// Laid out as torch.empty_like, and so torch.relu, lays it out.
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

// The walk over operands' strides (operand 0: the output), or none where the backend has no
// walk or more than StridedLayout::kMaxDims dimensions remain after merging.
template <typename Backend>
std::optional<StridedLayout> walk_of(int64_t dim, const int64_t* sizes,
                                     const int64_t* const* strides, int operands) {
  if constexpr (Backend::kWalksLayouts) return strided_layout(dim, sizes, strides, operands);
  return std::nullopt;
}

// out = activation(x) for x and out of any layouts with no copy, where the walk goes.
template <typename Backend>
void walk_forward(Activation activation, const Tensor& x, const Geometry& x_geom, Tensor& out,
                  const Geometry& out_geom) {
  const int64_t* strides[] = {out_geom.strides, x_geom.strides};
  if (const auto layout = walk_of<Backend>(out_geom.dim, out_geom.sizes, strides, 2)) {
    Backend::forward(activation, x_geom.dtype, x.const_data_ptr(), out.mutable_data_ptr(),
                     Walk{0, &*layout}, x_geom.device_index);
    return;
  }
  Tensor dense = contiguous_copy(x, x_geom);
  Backend::forward(activation, x_geom.dtype, dense.const_data_ptr(), dense.mutable_data_ptr(),
                   Walk{x_geom.numel}, x_geom.device_index);
  torch::stable::copy_(out, dense);
}

template <typename Backend>
void forward_out_checked(Activation activation, Tensor& out, const Geometry& out_geom,
                         const Tensor& x, const Geometry& x_geom) {
  if (x_geom.numel == 0) return;
  if (x_geom.same_dense_layout(out_geom) && out_geom.dense) {
    // Contiguous, channels-last, permuted-dense, and in place (out is x): one dense pass.
    Backend::forward(activation, x_geom.dtype, x.const_data_ptr(), out.mutable_data_ptr(),
                     Walk{x_geom.numel}, x_geom.device_index);
    return;
  }
  // The walk reads each element before writing it, so out may be x itself; any other sharing
  // (interleaved views, which the checks let through) could overwrite unread x: copy x first.
  const bool in_place =
      x.const_data_ptr() == out.const_data_ptr() && x_geom.same_strides(out_geom);
  if (!in_place && may_share_memory(x, x_geom, out, out_geom)) {
    const Tensor copy = contiguous_copy(x, x_geom);
    walk_forward<Backend>(activation, copy, Geometry(copy), out, out_geom);
    return;
  }
  walk_forward<Backend>(activation, x, x_geom, out, out_geom);
}

template <typename Backend, Activation kActivation>
void forward_out_impl(Tensor out, Tensor x) {
  const Geometry out_geom(out), x_geom(x);
  check_forward_args(kActivation, out, out_geom, x, x_geom);
  forward_out_checked<Backend>(kActivation, out, out_geom, x, x_geom);
}

template <typename Backend, Activation kActivation>
Tensor forward_impl(Tensor x) {
  const Geometry x_geom(x);
  check_supported_dtype(kActivation, x_geom);
  Tensor out = empty_with_layout_of(x_geom);
  forward_out_checked<Backend>(kActivation, out, x_geom.dense ? x_geom : Geometry(out), x,
                               x_geom);
  return out;
}

// grad_in in the saved tensor's layout (dense in its stride order when saved is not dense);
// a fresh tensor shares memory with neither input.
template <typename Backend, Activation kActivation>
Tensor backward_impl(Tensor grad_out, Tensor saved) {
  const Geometry grad_geom(grad_out), saved_geom(saved);
  check_backward_args(kActivation, grad_geom, saved_geom);
  Tensor grad_in = empty_with_layout_of(saved_geom);
  if (saved_geom.numel == 0) return grad_in;
  const auto run = [&](const Tensor& grad, const Tensor& kept, Walk walk) {
    Backend::backward(kActivation, saved_geom.dtype, grad.const_data_ptr(),
                      kept.const_data_ptr(), grad_in.mutable_data_ptr(), walk,
                      saved_geom.device_index);
    return grad_in;
  };
  if (saved_geom.same_dense_layout(grad_geom)) return run(grad_out, saved, Walk{saved_geom.numel});
  const Geometry grad_in_geom = saved_geom.dense ? saved_geom : Geometry(grad_in);
  const int64_t* strides[] = {grad_in_geom.strides, grad_geom.strides, saved_geom.strides};
  if (const auto layout = walk_of<Backend>(grad_in_geom.dim, grad_in_geom.sizes, strides, 3)) {
    return run(grad_out, saved, Walk{0, &*layout});
  }
  // Beyond the walk: both inputs in grad_in's layout first.
  Tensor grad = empty_with_layout_of(grad_in_geom), kept = empty_with_layout_of(grad_in_geom);
  torch::stable::copy_(grad, grad_out);
  torch::stable::copy_(kept, saved);
  return run(grad, kept, Walk{saved_geom.numel});
}

// ---- The gated ops: x [..., 2d] read as its halves a = x[..., :d] and b = x[..., d:], two
// inputs of one walk; no copy where the walk goes.

// b starts d elements along the last dimension of x (or of grad_x).
const char* second_half(const void* data, const Geometry& geom, int64_t d, int64_t elem_size) {
  return static_cast<const char*>(data) + d * geom.strides[geom.dim - 1] * elem_size;
}

// A dense copy of one half of x (the elements [start, start + d) of its last dimension).
Tensor dense_half(Tensor x, const Geometry& x_geom, int64_t start, int64_t d) {
  const Tensor half = torch::stable::narrow(x, x_geom.dim - 1, start, d);
  return contiguous_copy(half, Geometry(half));
}

template <typename Backend>
void gated_out_checked(Gate gate, Tensor& out, const Geometry& out_geom, const Tensor& x,
                       const Geometry& x_geom, double threshold) {
  if (out_geom.numel == 0) return;
  const DimArray sizes = half_sizes(x_geom);
  const int64_t d = sizes[x_geom.dim - 1];
  const int64_t* strides[] = {out_geom.strides, x_geom.strides, x_geom.strides};
  if (const auto layout = walk_of<Backend>(x_geom.dim, sizes.data(), strides, 3)) {
    const void* a = x.const_data_ptr();
    Backend::gated_forward(gate, x_geom.dtype, a, second_half(a, x_geom, d, x.element_size()),
                           out.mutable_data_ptr(), Walk{0, &*layout}, threshold,
                           x_geom.device_index);
    return;
  }
  const Tensor a = dense_half(x, x_geom, 0, d), b = dense_half(x, x_geom, d, d);
  Tensor result = empty_strided(Geometry(a), Geometry(a).strides);
  Backend::gated_forward(gate, x_geom.dtype, a.const_data_ptr(), b.const_data_ptr(),
                         result.mutable_data_ptr(), Walk{out_geom.numel}, threshold,
                         x_geom.device_index);
  torch::stable::copy_(out, result);
}

template <typename Backend, Gate kGate>
void gated_out_impl(Tensor out, Tensor x, double threshold) {
  const Geometry out_geom(out), x_geom(x);
  check_gated_x(kGate, x_geom);
  check_gated_out(kGate, out, out_geom, x, x_geom);
  gated_out_checked<Backend>(kGate, out, out_geom, x, x_geom, threshold);
}

template <typename Backend, Gate kGate>
Tensor gated_impl(Tensor x, double threshold) {
  const Geometry x_geom(x);
  check_gated_x(kGate, x_geom);
  // Dense in x's stride order, as F.relu(a) * b lays it out.
  const DimArray sizes = half_sizes(x_geom);
  const DimArray strides = dense_strides_like(x_geom.dim, sizes.data(), x_geom.strides);
  Tensor out = empty_strided(x_geom, sizes.data(), strides.data());
  gated_out_checked<Backend>(kGate, out, Geometry(out), x, x_geom, threshold);
  return out;
}

// grad_x [..., 2d] in x's layout: grad_a from (grad_out, a, b), then grad_b from (grad_out, a).
template <typename Backend, Gate kGate>
Tensor gated_backward_impl(Tensor grad_out, Tensor x, double threshold) {
  const Geometry grad_geom(grad_out), x_geom(x);
  check_gated_x(kGate, x_geom);
  check_gated_half(kGate, "grad_out", grad_geom, x_geom);
  Tensor grad_x = empty_with_layout_of(x_geom);
  if (grad_geom.numel == 0) return grad_x;
  const Geometry grad_x_geom = x_geom.dense ? x_geom : Geometry(grad_x);
  const DimArray sizes = half_sizes(x_geom);
  const int64_t d = sizes[x_geom.dim - 1];
  const int64_t* strides[] = {grad_x_geom.strides, grad_geom.strides, x_geom.strides,
                              x_geom.strides};
  if (const auto layout = walk_of<Backend>(x_geom.dim, sizes.data(), strides, 4)) {
    const void* a = x.const_data_ptr();
    char* grad_a = static_cast<char*>(grad_x.mutable_data_ptr());
    char* grad_b = const_cast<char*>(second_half(grad_a, grad_x_geom, d, x.element_size()));
    Backend::gated_backward(kGate, x_geom.dtype, grad_out.const_data_ptr(), a,
                            second_half(a, x_geom, d, x.element_size()), grad_a, grad_b,
                            Walk{0, &*layout}, threshold, x_geom.device_index);
    return grad_x;
  }
  const Tensor a = dense_half(x, x_geom, 0, d), b = dense_half(x, x_geom, d, d);
  const Tensor grad = contiguous_copy(grad_out, grad_geom);
  const Geometry a_geom(a);
  Tensor grad_a = empty_strided(a_geom, a_geom.strides);
  Tensor grad_b = empty_strided(a_geom, a_geom.strides);
  Backend::gated_backward(kGate, x_geom.dtype, grad.const_data_ptr(), a.const_data_ptr(),
                          b.const_data_ptr(), grad_a.mutable_data_ptr(), grad_b.mutable_data_ptr(),
                          Walk{grad_geom.numel}, threshold, x_geom.device_index);
  Tensor grad_x_a = torch::stable::narrow(grad_x, x_geom.dim - 1, 0, d);
  Tensor grad_x_b = torch::stable::narrow(grad_x, x_geom.dim - 1, d, d);
  torch::stable::copy_(grad_x_a, grad_a);
  torch::stable::copy_(grad_x_b, grad_b);
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
  register_kernels<Backend<Device::kCpu>>(ops);
}

#if defined(CUDA_KERNEL)
STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CUDA, ops) {
  register_kernels<Backend<Device::kCuda>>(ops);
}
#endif

#if defined(XPU_KERNEL)
STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, XPU, ops) {
  register_kernels<Backend<Device::kXpu>>(ops);
}
#endif

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
