// The relu ops: argument checks, layout handling and autograd, shared by every backend.
// A backend supplies only a "flat" kernel over dense tensors of one layout
// (torch_binding.h); everything a user can get wrong is rejected here, before any write.
//
//   relu(Tensor x) -> Tensor                          allocating, differentiable
//   relu_out(Tensor(a!) out, Tensor x) -> ()          writes out; out may be x (in place)
//   relu_backward(Tensor grad_out, Tensor result) -> Tensor
//                                                     grad_out * (result > 0), differentiable
#include <ATen/MemoryOverlap.h>
#include <torch/all.h>
#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

namespace {

constexpr const char* kNamespace = STRINGIFY(TORCH_EXTENSION_NAME);

// RELU_BACKEND: the dispatch key token of the one backend this build serves.
#if defined(CPU_KERNEL)
#define RELU_BACKEND CPU
constexpr auto kBackendKey = c10::DispatchKey::CPU;
constexpr auto relu_flat = relu_flat_cpu;
constexpr auto relu_backward_flat = relu_backward_flat_cpu;
#elif defined(CUDA_KERNEL)
#define RELU_BACKEND CUDA
constexpr auto kBackendKey = c10::DispatchKey::CUDA;
constexpr auto relu_flat = relu_flat_cuda;
constexpr auto relu_backward_flat = relu_backward_flat_cuda;
#elif defined(XPU_KERNEL)
#define RELU_BACKEND XPU
constexpr auto kBackendKey = c10::DispatchKey::XPU;
constexpr auto relu_flat = relu_flat_xpu;
constexpr auto relu_backward_flat = relu_backward_flat_xpu;
#else
#error "build with exactly one of CPU_KERNEL, CUDA_KERNEL, XPU_KERNEL"
#endif

constexpr const char* kSupportedDtypes =
    "float32, float16, bfloat16, float64, int8, int16, int32, int64, uint8";

// Error messages are assembled from strings only. The H200 image's g++ 13.3 compiled
// libstdc++'s number formatting into the extension, and printing an integer through that
// copy crashed the process (results/h200/run3/crash_backtrace.txt; no crash since, in
// results/h200/final/tests.log); a shape is therefore
// spelled out with std::to_string, dtypes and devices by their names.
std::string shape_of(const at::Tensor& t) {
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(t.size(d));
  }
  return text + "]";
}

const char* dtype_name(const at::Tensor& t) { return c10::toString(t.scalar_type()); }

std::string device_name(const at::Tensor& t) { return t.device().str(); }

bool is_supported(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: case at::kHalf: case at::kBFloat16: case at::kDouble:
    case at::kChar: case at::kShort: case at::kInt: case at::kLong: case at::kByte:
      return true;
    default:
      return false;
  }
}

bool is_floating(at::ScalarType dtype) {
  return dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16 ||
         dtype == at::kDouble;
}

void check_supported_dtype(const at::Tensor& x) {
  TORCH_CHECK_TYPE(is_supported(x.scalar_type()), "relu: x has dtype ", dtype_name(x),
                   "; supported dtypes are ", kSupportedDtypes);
}

void check_device(const at::Tensor& t, const char* name) {
  TORCH_CHECK_VALUE(t.device().type() == c10::backendToDeviceType(
                                             c10::dispatchKeyToBackend(kBackendKey)),
                    "relu: ", name, " is on ", device_name(t), " but this call runs the ",
                    c10::toString(kBackendKey),
                    " kernel; move every tensor argument to one device");
}

void check_relu_args(const at::Tensor& out, const at::Tensor& x) {
  check_supported_dtype(x);
  TORCH_CHECK_TYPE(out.scalar_type() == x.scalar_type(), "relu: out has dtype ",
                   dtype_name(out), " but x has dtype ", dtype_name(x),
                   "; out must have x's dtype");
  check_device(x, "x");
  check_device(out, "out");
  TORCH_CHECK_VALUE(out.device() == x.device(), "relu: out is on ", device_name(out),
                    " but x is on ", device_name(x), "; out must be on x's device");
  TORCH_CHECK_VALUE(out.sizes() == x.sizes(), "relu: out has shape ", shape_of(out),
                    " but x has shape ", shape_of(x),
                    "; out must have x's shape (it is never resized)");
  TORCH_CHECK_VALUE(at::has_internal_overlap(out) != at::MemOverlap::Yes,
                    "relu: out has elements that share memory (an expand()ed or "
                    "stride-0 view); pass a tensor whose elements are distinct");
  TORCH_CHECK_VALUE(at::get_overlap_status(out, x) != at::MemOverlapStatus::Partial,
                    "relu: out partially overlaps x; pass out=x for in place, or a "
                    "tensor that does not share x's memory");
}

// Same element order in memory and no gaps: a flat kernel over numel() elements is exact.
bool same_dense_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.is_non_overlapping_and_dense() && a.strides() == b.strides();
}

void relu_out_checked(at::Tensor& out, const at::Tensor& x) {
  if (x.numel() == 0) return;
  if (same_dense_layout(x, out) && out.is_non_overlapping_and_dense()) {
    // Contiguous, channels-last, permuted-dense, and in place (out is x): no copy.
    relu_flat(x, out);
    return;
  }
  // Genuinely strided x or out, or two different layouts. x is read in full into `src`
  // before out is written, so even an interleaved alias of x and out stays correct.
  const at::Tensor src = x.is_non_overlapping_and_dense() && !out.is_alias_of(x)
                             ? x
                             : x.clone(at::MemoryFormat::Contiguous);
  if (same_dense_layout(src, out)) {
    relu_flat(src, out);
    return;
  }
  at::Tensor dense = at::empty_like(src);
  relu_flat(src, dense);
  out.copy_(dense);
}

void relu_out_kernel(at::Tensor& out, const at::Tensor& x) {
  check_relu_args(out, x);
  relu_out_checked(out, x);
}

at::Tensor relu_kernel(const at::Tensor& x) {
  check_supported_dtype(x);
  check_device(x, "x");
  at::Tensor out = at::empty_like(x);  // keeps x's layout when x is dense
  relu_out_checked(out, x);
  return out;
}

at::Tensor relu_backward_kernel(const at::Tensor& grad_out, const at::Tensor& result) {
  TORCH_CHECK_TYPE(is_floating(result.scalar_type()), "relu_backward: result has dtype ",
                   dtype_name(result), "; gradients exist for float32, float16, bfloat16, "
                   "float64 only");
  TORCH_CHECK_TYPE(grad_out.scalar_type() == result.scalar_type(),
                   "relu_backward: grad_out has dtype ", dtype_name(grad_out),
                   " but result has dtype ", dtype_name(result));
  check_device(grad_out, "grad_out");
  check_device(result, "result");
  TORCH_CHECK_VALUE(grad_out.device() == result.device(), "relu_backward: grad_out is on ",
                    device_name(grad_out), " but result is on ", device_name(result));
  TORCH_CHECK_VALUE(grad_out.sizes() == result.sizes(), "relu_backward: grad_out has shape ",
                    shape_of(grad_out), " but result has shape ", shape_of(result));
  // One dense layout for all three (a copy only for strided or mixed layouts).
  const at::Tensor res = result.is_non_overlapping_and_dense() ? result : result.contiguous();
  const at::Tensor grad =
      same_dense_layout(grad_out, res) ? grad_out : at::empty_like(res).copy_(grad_out);
  at::Tensor grad_in = at::empty_like(res);
  if (res.numel() > 0) relu_backward_flat(grad, res, grad_in);
  return grad_in;
}

// Typed handles to our own ops, for redispatch from the autograd kernels.
const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&)>& relu_op() {
  static const auto handle = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow((std::string(kNamespace) + "::relu").c_str(), "")
                                 .typed<at::Tensor(const at::Tensor&)>();
  return handle;
}

const c10::TypedOperatorHandle<void(at::Tensor&, const at::Tensor&)>& relu_out_op() {
  static const auto handle =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow((std::string(kNamespace) + "::relu_out").c_str(), "")
          .typed<void(at::Tensor&, const at::Tensor&)>();
  return handle;
}

const c10::TypedOperatorHandle<at::Tensor(const at::Tensor&, const at::Tensor&)>&
relu_backward_op() {
  static const auto handle =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow((std::string(kNamespace) + "::relu_backward").c_str(), "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return handle;
}

// Autograd in C++ rather than torch.library.register_autograd in Python: the Python
// route runs Python on every call, grad or not, and at small sizes the call path, not
// the kernel, decides the latency. Saves the output only: result > 0 exactly where x > 0.
class ReluFunction : public torch::autograd::Function<ReluFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x) {
    at::AutoDispatchBelowADInplaceOrView guard;
    at::Tensor result = relu_op().call(x);
    ctx->save_for_backward({result});
    return result;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor result = ctx->get_saved_variables()[0];
    return {relu_backward_op().call(grads[0], result)};
  }
};

// relu_backward is differentiable too, so double backward (create_graph=True: gradient
// penalties, Hessian-vector products) works as with torch.relu: grad_out * mask is linear
// in grad_out with the same mask, and the mask is flat in result (no gradient, as torch's
// threshold_backward gives).
class ReluBackwardFunction : public torch::autograd::Function<ReluBackwardFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& grad_out,
                            const at::Tensor& result) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({result});
    return relu_backward_op().call(grad_out, result);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor result = ctx->get_saved_variables()[0];
    return {relu_backward_op().call(grads[0], result), at::Tensor()};
  }
};

// Function::apply does its bookkeeping (a graph node) even when nothing is recorded, which
// costs about as much as the whole op at small sizes (3 us of 6 us per call for 4096 float32
// on the dev CPU): when no gradient can flow, go straight to the kernel. A forward-mode
// tangent still goes to apply, which raises (no jvp) rather than silently dropping it.
bool records_gradient(const at::Tensor& t) {
  return (at::GradMode::is_enabled() && t.requires_grad()) || t._fw_grad(/*level=*/0).defined();
}

at::Tensor relu_autograd(const at::Tensor& x) {
  if (records_gradient(x)) return ReluFunction::apply(x);
  at::AutoDispatchBelowADInplaceOrView guard;
  return relu_op().call(x);
}

at::Tensor relu_backward_autograd(const at::Tensor& grad_out, const at::Tensor& result) {
  if (records_gradient(grad_out) || records_gradient(result)) {
    return ReluBackwardFunction::apply(grad_out, result);
  }
  at::AutoDispatchBelowADInplaceOrView guard;
  return relu_backward_op().call(grad_out, result);
}

void relu_out_autograd(at::Tensor& out, const at::Tensor& x) {
  // torch's own wording for out= ops, so users see one message whichever relu they call.
  TORCH_CHECK(!(at::GradMode::is_enabled() && (x.requires_grad() || out.requires_grad())),
              "relu(): functions with out=... arguments don't support automatic "
              "differentiation, but one of the arguments requires grad.");
  at::AutoDispatchBelowAutograd guard;  // on to ADInplaceOrView, which bumps out's version
  relu_out_op().call(out, x);
}

// Writing into `out` bumps its version counter, as every torch in-place and out= op does:
// a tensor autograd saved and then overwritten (say under no_grad) must make backward
// raise, not silently use the new values. Custom ops get no such kernel by default.
void relu_out_inplace_or_view(at::Tensor& out, const at::Tensor& x) {
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    relu_out_op().call(out, x);
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor x) -> Tensor");
  ops.def("relu_out(Tensor(a!) out, Tensor x) -> ()");
  ops.def("relu_backward(Tensor grad_out, Tensor result) -> Tensor");
#if defined(CPU_KERNEL)
  ops.def("cpu_isa() -> str", &relu_cpu_isa);
#endif
}

TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, RELU_BACKEND, ops) {
  ops.impl("relu", &relu_kernel);
  ops.impl("relu_out", &relu_out_kernel);
  ops.impl("relu_backward", &relu_backward_kernel);
}

TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, Autograd, ops) {
  ops.impl("relu", &relu_autograd);
  ops.impl("relu_out", &relu_out_autograd);
  ops.impl("relu_backward", &relu_backward_autograd);
}

TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, ADInplaceOrView, ops) {
  ops.impl("relu_out", &relu_out_inplace_or_view);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
