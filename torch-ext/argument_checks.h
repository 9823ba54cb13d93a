// Argument checks of the ops: everything a user can get wrong is rejected here, before any
// write, with a message that names the argument and what is accepted. The Python package
// checks the same things in the same words for the traced path and to type the errors
// (torch-ext/relu/_checks.py); tests/test_contract.py holds both to one text.
#pragma once

#include <stdexcept>
#include <string>

#include "relu-common/relu_dtypes.h"
#include "torch-ext/tensor_geometry.h"

namespace relu_binding {

using relu_kernel::dtype_name;

// Every bad argument raises std::invalid_argument: torch hands it to Python as ValueError
// (pybind11's translation), and the Python wrapper raises dtype mistakes again as TypeError.
// Messages are built from strings only: the H200 image's g++ 13.3 once compiled libstdc++'s
// number formatting into the extension, and formatting an integer through that copy crashed.
[[noreturn]] inline void fail(const std::string& message) { throw std::invalid_argument(message); }

inline void check_supported_dtype(const Geometry& x) {
  if (!relu_kernel::is_supported(x.dtype)) {
    fail("relu: x has dtype " + dtype_name(x.dtype) + "; supported dtypes are " +
         relu_kernel::supported_dtype_names());
  }
}

inline void check_relu_args(const Tensor& out, const Geometry& go, const Tensor& x,
                            const Geometry& gx) {
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
  // strided ones the pass reads all of x before writing out, so any sharing is safe.
  if (go.dense && gx.dense && may_share_memory(out, go, x, gx) &&
      !(out.const_data_ptr() == x.const_data_ptr() && go.same_strides(gx))) {
    fail("relu: out partially overlaps x; pass out=x for in place, or a tensor that does "
         "not share x's memory");
  }
}

inline void check_backward_args(const Geometry& gg, const Geometry& gr) {
  if (!relu_kernel::has_gradient(gr.dtype)) {
    fail("relu_backward: result has dtype " + dtype_name(gr.dtype) + "; gradients exist for " +
         relu_kernel::gradient_dtype_names() + " only");
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
}

}  // namespace relu_binding
