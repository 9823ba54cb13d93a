// The work of the XPU kernels in plain C++: how many work-items run over a flat range split
// into an unaligned head, 16-byte vectors and a tail (relu-common/vector16.h), and what one
// work-item does. relu_xpu.cpp only wraps these in SYCL kernels; everything here also
// compiles with a host compiler, so tests/xpu_items_check.cpp runs it on the CPU (every
// work-item in turn) against the tests' reference, for every dtype, size and alignment. The
// SYCL glue itself is not run by this project (see relu-xpu/README.md).
#pragma once

#include <cstdint>
#include <cstring>

#include "relu-common/activations.h"
#include "relu-common/gated_element.h"
#include "relu-common/relu_element.h"
#include "relu-common/vector16.h"

namespace relu_kernel {

// What the XPU kernel does for one activation and format Fmt: the element type it moves, and
// the forward and backward of one element and of one 16-byte vector (the backward's second
// operand is activations.h's saved tensor: relu's result, relu_squared's x).
template <Activation kActivation, typename Fmt>
struct XpuOps;

template <typename Fmt>
struct XpuOps<Activation::kRelu, Fmt> {
  using Element = typename Fmt::Storage;
  using Vector = Vector16<typename Fmt::Word>;

  static Element forward_element(Element x) { return relu_forward<Fmt>(x); }
  static Vector forward_vector(Vector v) { return relu_forward<Fmt>(v); }
  static Element backward_element(Element grad, Element result) {
    return relu_backward<Fmt>(grad, result);
  }
  static Vector backward_vector(Vector grad, Vector result) {
    return relu_backward<Fmt>(grad, result);
  }
};

// float64 as bit patterns, with the bit form lanes::relu_forward: no double in the kernel at all.
// Intel's DG2 GPUs (Arc A-series, Flex) have no fp64 unit; kernel-builder compiles with
// -cl-poison-unsupported-fp64-kernels, and a kernel that uses the double type at all fails
// there at launch ("Required aspect fp64 is not supported on the device"). With integer
// words, relu on float64 tensors needs no fp64 hardware. lanes::relu_forward<Float64Format> is
// checked against the reference like the rest of the header (tests/relu_element_check.cpp).
template <>
struct XpuOps<Activation::kRelu, Float64Format> {
  using Element = uint64_t;
  using Vector = Vector16<uint64_t>;

  static Element forward_element(Element x) { return lanes::relu_forward<Float64Format>(x); }
  static Vector forward_vector(Vector v) {
    for (int i = 0; i < Vector::kWords; ++i) v.words[i] = lanes::relu_forward<Float64Format>(v.words[i]);
    return v;
  }
  // relu(result) is +0 (all bits clear) exactly where result > 0 is false.
  static Element backward_element(Element grad, Element result) {
    return lanes::relu_forward<Float64Format>(result) != 0 ? grad : Element(0);
  }
  static Vector backward_vector(Vector grad, Vector result) {
    for (int i = 0; i < Vector::kWords; ++i) {
      grad.words[i] = backward_element(grad.words[i], result.words[i]);
    }
    return grad;
  }
};

// relu_squared (relu_squared_element.h), element by element in OpMath. float64 computes in
// double, so its kernel needs a device with fp64 (relu_xpu.cpp checks before submitting).
template <typename Fmt>
struct XpuOps<Activation::kReluSquared, Fmt> {
  using Element = typename Fmt::Storage;
  using Vector = Vector16<typename Fmt::Word>;
  static constexpr int kElements = int(kVectorBytes / sizeof(Element));

  static Element forward_element(Element x) {
    return relu_kernel::activation_forward<Activation::kReluSquared, Fmt>(x);
  }
  static Vector forward_vector(Vector v) {
    Element x[kElements];
    std::memcpy(x, v.words, kVectorBytes);
    for (int i = 0; i < kElements; ++i) x[i] = forward_element(x[i]);
    std::memcpy(v.words, x, kVectorBytes);
    return v;
  }
  static Element backward_element(Element grad, Element x) {
    return relu_kernel::activation_backward<Activation::kReluSquared, Fmt>(grad, x);
  }
  static Vector backward_vector(Vector grad, Vector x) {
    Element g[kElements];
    Element xs[kElements];
    std::memcpy(g, grad.words, kVectorBytes);
    std::memcpy(xs, x.words, kVectorBytes);
    for (int i = 0; i < kElements; ++i) g[i] = backward_element(g[i], xs[i]);
    std::memcpy(grad.words, g, kVectorBytes);
    return grad;
  }
};

// n elements as [head | vectors | tail] (vector16.h), the vectors 16-byte aligned in every
// array the kernel touches. When the arrays disagree on their offset within 16 bytes (an
// unaligned view against a fresh output, say) no element index is aligned in all of them:
// then everything is head, one element per access. The CUDA kernels read such an input as
// shifted granules instead (relu-cuda/memory.cuh): unmeasured here, so not ported.
inline VectorSplit split_flat(int64_t n, int element_size, const void* const* arrays, int count) {
  const int misalignment = misalignment16(arrays[0]);
  bool common_offset = misalignment % element_size == 0;
  for (int i = 1; i < count; ++i) {
    common_offset = common_offset && misalignment16(arrays[i]) == misalignment;
  }
  if (!common_offset) return VectorSplit{n, 0, n, 0};
  return split_for_vectors(n, misalignment, element_size);
}

// Launch shape. Every Intel GPU that PyTorch's XPU backend supports takes work-groups of 256
// (the limit is 512 or 1024 there). One 16-byte vector per work-item up to kMaxItems, which
// keeps the global range below 2^31: DPC++ compiles with -fsycl-id-queries-fit-in-int unless
// told otherwise (kernel-builder does not), so a larger range would overflow the ids. Past
// it, each work-item loops, with 64-bit indexes. Neither number has been measured on an
// Intel GPU (relu-xpu/README.md).
constexpr int64_t kWorkGroupSize = 256;
constexpr int64_t kMaxItems = int64_t(1) << 28;

inline int64_t launch_items(const VectorSplit& split) {
  int64_t needed = split.vectors;
  if (split.head > needed) needed = split.head;
  if (split.tail > needed) needed = split.tail;
  if (needed > kMaxItems) needed = kMaxItems;
  return (needed + kWorkGroupSize - 1) / kWorkGroupSize * kWorkGroupSize;
}

// The share of work-item `item` of `items`: the vectors, the head elements and the tail
// elements whose index is item modulo items. on_vector(w) handles vector w of the aligned
// body, on_element(i) element i of the whole range. Nothing is shared between work-items, so
// in-place calls (in == out) are safe.
template <typename OnVector, typename OnElement>
inline void for_item_share(const VectorSplit& split, int64_t item, int64_t items,
                           const OnVector& on_vector, const OnElement& on_element) {
  for (int64_t w = item; w < split.vectors; w += items) on_vector(w);
  for (int64_t i = item; i < split.head; i += items) on_element(i);
  for (int64_t i = item; i < split.tail; i += items) on_element(split.tail_start + i);
}

template <typename Ops>
inline void forward_item(const VectorSplit& split, const typename Ops::Element* in,
                         typename Ops::Element* out, int64_t item, int64_t items) {
  using Vector = typename Ops::Vector;
  const Vector* in_vectors = reinterpret_cast<const Vector*>(in + split.head);
  Vector* out_vectors = reinterpret_cast<Vector*>(out + split.head);
  for_item_share(
      split, item, items, [&](int64_t w) { out_vectors[w] = Ops::forward_vector(in_vectors[w]); },
      [&](int64_t i) { out[i] = Ops::forward_element(in[i]); });
}

template <typename Ops>
inline void backward_item(const VectorSplit& split, const typename Ops::Element* grad,
                          const typename Ops::Element* saved, typename Ops::Element* grad_in,
                          int64_t item, int64_t items) {
  using Vector = typename Ops::Vector;
  const Vector* grad_vectors = reinterpret_cast<const Vector*>(grad + split.head);
  const Vector* saved_vectors = reinterpret_cast<const Vector*>(saved + split.head);
  Vector* grad_in_vectors = reinterpret_cast<Vector*>(grad_in + split.head);
  for_item_share(
      split, item, items,
      [&](int64_t w) {
        grad_in_vectors[w] = Ops::backward_vector(grad_vectors[w], saved_vectors[w]);
      },
      [&](int64_t i) { grad_in[i] = Ops::backward_element(grad[i], saved[i]); });
}

// ---- The gated ops (gated_element.h): one pass computes out from Op::kInputs dense arrays,
// element by element in OpMath, reading and writing whole 16-byte vectors. Forward in = {a, b};
// the backward's two passes in = {grad_out, a, b} (grad_a), then {grad_out, a} (grad_b).
// float64 computes in double (relu_xpu.cpp checks the device has fp64).
template <Gate kGate, typename Fmt>
struct XpuGatedOp {
  using Element = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  typename OpMath<Fmt>::Type threshold;
  Element operator()(const Element (&x)[2]) const {
    return gated_forward<kGate, Fmt>(x[0], x[1], threshold);
  }
};

template <Gate kGate, typename Fmt>
struct XpuGatedGradAOp {
  using Element = typename Fmt::Storage;
  static constexpr int kInputs = 3;
  typename OpMath<Fmt>::Type threshold;
  Element operator()(const Element (&x)[3]) const {
    return gated_grad_a<kGate, Fmt>(x[0], x[1], x[2], threshold);
  }
};

template <Gate kGate, typename Fmt>
struct XpuGatedGradBOp {
  using Element = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  typename OpMath<Fmt>::Type threshold;
  Element operator()(const Element (&x)[2]) const {
    return gated_grad_b<kGate, Fmt>(x[0], x[1], threshold);
  }
};

template <typename Op>
struct GatedPass {
  VectorSplit split;  // over every array of the pass
  const typename Op::Element* in[Op::kInputs];
  typename Op::Element* out;
  Op op;
};

template <typename Op>
GatedPass<Op> gated_pass(const Op& op, const void* const (&in)[Op::kInputs], void* out,
                         int64_t n) {
  GatedPass<Op> pass{};
  const void* arrays[Op::kInputs + 1];
  for (int k = 0; k < Op::kInputs; ++k) {
    pass.in[k] = static_cast<const typename Op::Element*>(in[k]);
    arrays[k] = in[k];
  }
  pass.out = static_cast<typename Op::Element*>(out);
  arrays[Op::kInputs] = out;
  pass.split = split_flat(n, int(sizeof(typename Op::Element)), arrays, Op::kInputs + 1);
  pass.op = op;
  return pass;
}

template <typename Op>
inline void gated_item(const GatedPass<Op>& pass, int64_t item, int64_t items) {
  using Element = typename Op::Element;
  using Vector = Vector16<uint32_t>;
  constexpr int kInputs = Op::kInputs;
  constexpr int kElements = int(kVectorBytes / sizeof(Element));
  const VectorSplit& split = pass.split;
  for_item_share(
      split, item, items,
      [&](int64_t w) {
        Element x[kInputs][kElements];
        for (int k = 0; k < kInputs; ++k) {
          const Vector v = reinterpret_cast<const Vector*>(pass.in[k] + split.head)[w];
          std::memcpy(x[k], v.words, kVectorBytes);
        }
        Element y[kElements];
        for (int i = 0; i < kElements; ++i) {
          Element operands[kInputs];
          for (int k = 0; k < kInputs; ++k) operands[k] = x[k][i];
          y[i] = pass.op(operands);
        }
        Vector v;
        std::memcpy(v.words, y, kVectorBytes);
        reinterpret_cast<Vector*>(pass.out + split.head)[w] = v;
      },
      [&](int64_t i) {
        Element operands[kInputs];
        for (int k = 0; k < kInputs; ++k) operands[k] = pass.in[k][i];
        pass.out[i] = pass.op(operands);
      });
}

}  // namespace relu_kernel
