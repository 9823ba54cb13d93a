// Argument checks of the ops: everything a user can get wrong is rejected here, before any
// write, with a message that names the argument and what is accepted. The Python package
// checks the same things in the same words for the traced path and to type the errors
// (torch-ext/relu/_checks.py); tests/test_contract.py holds both to one text.
#pragma once

#include <stdexcept>
#include <string>

#include "relu-common/activations.h"
#include "torch-ext/tensor_geometry.h"

namespace relu_binding {

using relu_kernel::dtype_name;

// Every bad argument raises std::invalid_argument: torch hands it to Python as ValueError
// (pybind11's translation), and the Python wrapper raises dtype mistakes again as TypeError.
// Messages are built from strings only: the H200 image's g++ 13.3 once compiled libstdc++'s
// number formatting into the extension, and formatting an integer through that copy crashed.
[[noreturn]] inline void fail(const std::string& message) { throw std::invalid_argument(message); }

using relu_kernel::Activation;

inline void check_supported_dtype(Activation activation, const Geometry& x) {
  if (!relu_kernel::supports_dtype(activation, x.dtype)) {
    fail(std::string(relu_kernel::activation_name(activation)) + ": x has dtype " +
         dtype_name(x.dtype) + "; supported dtypes are " +
         relu_kernel::accepted_dtype_names(activation));
  }
}

inline void check_forward_args(Activation activation, const Tensor& out, const Geometry& go,
                               const Tensor& x, const Geometry& gx) {
  check_supported_dtype(activation, gx);
  const std::string op = relu_kernel::activation_name(activation);
  if (go.dtype != gx.dtype) {
    fail(op + ": out has dtype " + dtype_name(go.dtype) + " but x has dtype " +
         dtype_name(gx.dtype) + "; out must have x's dtype");
  }
  if (!go.same_device(gx)) {
    fail(op + ": out is on " + go.device() + " but x is on " + gx.device() +
         "; out must be on x's device");
  }
  if (!go.same_shape(gx)) {
    fail(op + ": out has shape " + go.shape() + " but x has shape " + gx.shape() +
         "; out must have x's shape (it is never resized)");
  }
  if (go.has_repeated_elements()) {
    fail(op + ": out has elements that share memory (an expand()ed or stride-0 view); "
         "pass a tensor whose elements are distinct");
  }
  // Two dense tensors that share memory must be the very same elements (in place); for
  // strided ones the pass reads all of x before writing out, so any sharing is safe.
  if (go.dense && gx.dense && may_share_memory(out, go, x, gx) &&
      !(out.const_data_ptr() == x.const_data_ptr() && go.same_strides(gx))) {
    fail(op + ": out partially overlaps x; pass out=x for in place, or a tensor that does "
         "not share x's memory");
  }
}

// gs: the saved tensor (relu's result, relu_squared's x: activations.h saved_name).
inline void check_backward_args(Activation activation, const Geometry& gg, const Geometry& gs) {
  const std::string op = std::string(relu_kernel::activation_name(activation)) + "_backward";
  const std::string saved = relu_kernel::saved_name(activation);
  if (!relu_kernel::has_gradient(gs.dtype)) {
    fail(op + ": " + saved + " has dtype " + dtype_name(gs.dtype) + "; gradients exist for " +
         relu_kernel::gradient_dtype_names() + " only");
  }
  if (gg.dtype != gs.dtype) {
    fail(op + ": grad_out has dtype " + dtype_name(gg.dtype) + " but " + saved + " has dtype " +
         dtype_name(gs.dtype));
  }
  if (!gg.same_device(gs)) {
    fail(op + ": grad_out is on " + gg.device() + " but " + saved + " is on " + gs.device());
  }
  if (!gg.same_shape(gs)) {
    fail(op + ": grad_out has shape " + gg.shape() + " but " + saved + " has shape " +
         gs.shape());
  }
}

// ---- The gated ops: x is [..., 2d], out and grad_out [..., d].

using relu_kernel::Gate;

// The shape of the output half: x's with the last dimension halved.
inline DimArray half_sizes(const Geometry& gx) {
  DimArray sizes(gx.dim);
  for (int64_t d = 0; d < gx.dim; ++d) sizes[d] = gx.sizes[d];
  sizes[gx.dim - 1] /= 2;
  return sizes;
}

inline std::string shape_text(const DimArray& sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}

inline void check_gated_x(Gate gate, const Geometry& gx) {
  const std::string op = relu_kernel::gate_name(gate);
  if (!relu_kernel::has_gradient(gx.dtype)) {
    fail(op + ": x has dtype " + dtype_name(gx.dtype) + "; supported dtypes are " +
         relu_kernel::gradient_dtype_names());
  }
  if (gx.dim == 0 || gx.sizes[gx.dim - 1] % 2 != 0) {
    fail(op + ": x has shape " + gx.shape() + "; its last dimension must be even (x is [..., 2d])");
  }
}

// `what` ("out", "grad_out") must be a [..., d] tensor of x's dtype and device.
inline void check_gated_half(Gate gate, const char* what, const Geometry& gh, const Geometry& gx) {
  const std::string op = relu_kernel::gate_name(gate);
  if (gh.dtype != gx.dtype) {
    fail(op + ": " + what + " has dtype " + dtype_name(gh.dtype) + " but x has dtype " +
         dtype_name(gx.dtype) + "; " + what + " must have x's dtype");
  }
  if (!gh.same_device(gx)) {
    fail(op + ": " + what + " is on " + gh.device() + " but x is on " + gx.device() + "; " + what +
         " must be on x's device");
  }
  const DimArray want = half_sizes(gx);
  if (gh.dim != gx.dim || !std::equal(want.begin(), want.end(), gh.sizes)) {
    fail(op + ": " + what + " has shape " + gh.shape() + " but must have shape " +
         shape_text(want) + " (x's with the last dimension halved; it is never resized)");
  }
}

// out must not share x's memory: the halves are read as out is written.
inline void check_gated_out(Gate gate, const Tensor& out, const Geometry& go, const Tensor& x,
                            const Geometry& gx) {
  check_gated_half(gate, "out", go, gx);
  const std::string op = relu_kernel::gate_name(gate);
  if (go.has_repeated_elements()) {
    fail(op + ": out has elements that share memory (an expand()ed or stride-0 view); "
         "pass a tensor whose elements are distinct");
  }
  if (may_share_memory(out, go, x, gx)) {
    fail(op + ": out overlaps x; pass a tensor that does not share x's memory");
  }
}

}  // namespace relu_binding
