// What a user can get wrong, rejected before any write with a message naming the argument and
// what is accepted. torch-ext/relu/_checks.py says the same in the same words (test_contract.py).
#pragma once

#include <stdexcept>
#include <string>

#include "relu-common/activations.h"
#include "torch-ext/tensor_geometry.h"

namespace relu_binding {

using relu_kernel::Activation;
using relu_kernel::Gate;
using relu_kernel::dtype_name;

// std::invalid_argument reaches Python as ValueError. Strings only: an integer formatted
// through a libstdc++ copy compiled into the extension once crashed.
[[noreturn]] inline void fail(const std::string& message) { throw std::invalid_argument(message); }

inline void check_supported_dtype(Activation activation, const Geometry& x) {
  if (!relu_kernel::supports_dtype(activation, x.dtype)) {
    fail(std::string(relu_kernel::activation_name(activation)) + ": x has dtype " +
         dtype_name(x.dtype) + "; supported dtypes are " +
         relu_kernel::accepted_dtype_names(activation));
  }
}

// `what` (out, grad_out) must have the dtype and device of `like` (x, or a backward's saved).
inline void check_like(const std::string& op, const std::string& what, const Geometry& geom,
                       const std::string& like, const Geometry& like_geom) {
  if (geom.dtype != like_geom.dtype) {
    fail(op + ": " + what + " has dtype " + dtype_name(geom.dtype) + " but " + like +
         " has dtype " + dtype_name(like_geom.dtype) + "; " + what + " must have " + like +
         "'s dtype");
  }
  if (!geom.same_device(like_geom)) {
    fail(op + ": " + what + " is on " + geom.device() + " but " + like + " is on " +
         like_geom.device() + "; " + what + " must be on " + like + "'s device");
  }
}

inline void check_distinct_elements(const std::string& op, const Geometry& out_geom) {
  if (out_geom.has_repeated_elements()) {
    fail(op + ": out has elements that share memory (an expand()ed or stride-0 view); "
         "pass a tensor whose elements are distinct");
  }
}

inline void check_forward_args(Activation activation, const Tensor& out, const Geometry& out_geom,
                               const Tensor& x, const Geometry& x_geom) {
  check_supported_dtype(activation, x_geom);
  const std::string op = relu_kernel::activation_name(activation);
  check_like(op, "out", out_geom, "x", x_geom);
  if (!out_geom.same_shape(x_geom)) {
    fail(op + ": out has shape " + out_geom.shape() + " but x has shape " + x_geom.shape() +
         "; out must have x's shape (it is never resized)");
  }
  check_distinct_elements(op, out_geom);
  // Dense operands are one pass in memory order: sharing is safe only as the very same
  // elements. A strided pass reads each element before writing it.
  if (out_geom.dense && x_geom.dense && may_share_memory(out, out_geom, x, x_geom) &&
      !(out.const_data_ptr() == x.const_data_ptr() && out_geom.same_strides(x_geom))) {
    fail(op + ": out partially overlaps x; pass out=x for in place, or a tensor that does "
         "not share x's memory");
  }
}

// saved: relu's result, relu_squared's x (activations.h saved_name).
inline void check_backward_args(Activation activation, const Geometry& grad_geom,
                                const Geometry& saved_geom) {
  const std::string op = std::string(relu_kernel::activation_name(activation)) + "_backward";
  const std::string saved = relu_kernel::saved_name(activation);
  if (!relu_kernel::has_gradient(saved_geom.dtype)) {
    fail(op + ": " + saved + " has dtype " + dtype_name(saved_geom.dtype) +
         "; gradients exist for " + relu_kernel::gradient_dtype_names() + " only");
  }
  check_like(op, "grad_out", grad_geom, saved, saved_geom);
  if (!grad_geom.same_shape(saved_geom)) {
    fail(op + ": grad_out has shape " + grad_geom.shape() + " but " + saved + " has shape " +
         saved_geom.shape());
  }
}

// ---- The gated ops: x is [..., 2d], out and grad_out [..., d].

inline DimArray half_sizes(const Geometry& x_geom) {
  DimArray sizes(x_geom.dim);
  for (int64_t d = 0; d < x_geom.dim; ++d) sizes[d] = x_geom.sizes[d];
  sizes[x_geom.dim - 1] /= 2;
  return sizes;
}

inline std::string shape_text(const DimArray& sizes) {
  std::string text = "[";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(sizes[d]);
  return text + "]";
}

inline void check_gated_x(Gate gate, const Geometry& x_geom) {
  const std::string op = relu_kernel::gate_name(gate);
  if (!relu_kernel::has_gradient(x_geom.dtype)) {
    fail(op + ": x has dtype " + dtype_name(x_geom.dtype) + "; supported dtypes are " +
         relu_kernel::gradient_dtype_names());
  }
  if (x_geom.dim == 0 || x_geom.sizes[x_geom.dim - 1] % 2 != 0) {
    fail(op + ": x has shape " + x_geom.shape() +
         "; its last dimension must be even (x is [..., 2d])");
  }
}

// `what` (out, grad_out): [..., d] of x's dtype and device.
inline void check_gated_half(Gate gate, const char* what, const Geometry& half_geom,
                             const Geometry& x_geom) {
  const std::string op = relu_kernel::gate_name(gate);
  check_like(op, what, half_geom, "x", x_geom);
  const DimArray want = half_sizes(x_geom);
  if (half_geom.dim != x_geom.dim || !std::equal(want.begin(), want.end(), half_geom.sizes)) {
    fail(op + ": " + what + " has shape " + half_geom.shape() + " but must have shape " +
         shape_text(want) + " (x's with the last dimension halved; it is never resized)");
  }
}

// The halves are read as out is written: no sharing at all.
inline void check_gated_out(Gate gate, const Tensor& out, const Geometry& out_geom,
                            const Tensor& x, const Geometry& x_geom) {
  check_gated_half(gate, "out", out_geom, x_geom);
  const std::string op = relu_kernel::gate_name(gate);
  check_distinct_elements(op, out_geom);
  if (may_share_memory(out, out_geom, x, x_geom)) {
    fail(op + ": out overlaps x; pass a tensor that does not share x's memory");
  }
}

}  // namespace relu_binding
