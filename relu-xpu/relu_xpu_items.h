// The work of the XPU kernels in plain C++: how many work-items run over a dense range split
// into head, 16-byte vectors and tail (relu-common/vector16.h), and what one work-item does.
// Host-compilable, so tests/xpu_items_check.cpp runs every work-item on the CPU against the
// tests' reference; relu_xpu.cpp only wraps these in SYCL kernels.
#pragma once

#include <cstdint>
#include <cstring>

#include "relu-common/activations.h"
#include "relu-common/gated_element.h"
#include "relu-common/relu_element.h"
#include "relu-common/vector16.h"
#include "relu-xpu/tuning.h"

namespace relu_kernel {

// One activation on format Fmt: the Storage the kernel moves, and the forward and backward of
// one element and one 16-byte vector (backward's second operand: activations.h's saved tensor).
template <Activation kActivation, typename Fmt>
struct XpuOps;

template <typename Fmt>
struct XpuOps<Activation::kRelu, Fmt> {
  using Storage = typename Fmt::Storage;
  using Vector = Vector16<typename Fmt::Word>;

  static Storage forward_element(Storage x) { return relu_forward<Fmt>(x); }
  static Vector forward_vector(Vector v) { return relu_forward<Fmt>(v); }
  static Storage backward_element(Storage grad, Storage result) {
    return relu_backward<Fmt>(grad, result);
  }
  static Vector backward_vector(Vector grad, Vector result) {
    return relu_backward<Fmt>(grad, result);
  }
};

// relu on float64 as bit patterns (lanes::relu_forward), no double at all: DG2 GPUs have no fp64, and
// under -cl-poison-unsupported-fp64-kernels a kernel using double fails there at launch.
template <>
struct XpuOps<Activation::kRelu, Float64Format> {
  using Storage = uint64_t;
  using Vector = Vector16<uint64_t>;

  static Storage forward_element(Storage x) { return lanes::relu_forward<Float64Format>(x); }
  static Vector forward_vector(Vector v) {
    for (int i = 0; i < Vector::kWords; ++i) v.words[i] = lanes::relu_forward<Float64Format>(v.words[i]);
    return v;
  }
  // relu(result) is +0 (all bits clear) exactly where result > 0 is false.
  static Storage backward_element(Storage grad, Storage result) {
    return lanes::relu_forward<Float64Format>(result) != 0 ? grad : Storage(0);
  }
  static Vector backward_vector(Vector grad, Vector result) {
    for (int i = 0; i < Vector::kWords; ++i) {
      grad.words[i] = backward_element(grad.words[i], result.words[i]);
    }
    return grad;
  }
};

// relu_squared element by element in OpMath; float64 needs fp64 (relu_xpu.cpp checks).
template <typename Fmt>
struct XpuOps<Activation::kReluSquared, Fmt> {
  using Storage = typename Fmt::Storage;
  using Vector = Vector16<typename Fmt::Word>;
  static constexpr int kElements = int(kVectorBytes / sizeof(Storage));

  static Storage forward_element(Storage x) {
    return relu_kernel::activation_forward<Activation::kReluSquared, Fmt>(x);
  }
  static Vector forward_vector(Vector v) {
    Storage x[kElements];
    std::memcpy(x, v.words, kVectorBytes);
    for (int i = 0; i < kElements; ++i) x[i] = forward_element(x[i]);
    std::memcpy(v.words, x, kVectorBytes);
    return v;
  }
  static Storage backward_element(Storage grad, Storage x) {
    return relu_kernel::activation_backward<Activation::kReluSquared, Fmt>(grad, x);
  }
  static Vector backward_vector(Vector grad, Vector x) {
    Storage g[kElements];
    Storage xs[kElements];
    std::memcpy(g, grad.words, kVectorBytes);
    std::memcpy(xs, x.words, kVectorBytes);
    for (int i = 0; i < kElements; ++i) g[i] = backward_element(g[i], xs[i]);
    std::memcpy(grad.words, g, kVectorBytes);
    return grad;
  }
};

// n elements as [head | vectors | tail] (vector16.h), the vectors 16-byte aligned in every
// array. Arrays that disagree on their offset within 16 bytes share no aligned index: then
// everything is head, one element per access.
inline VectorSplit split_dense(int64_t n, int element_size, const void* const* arrays, int count) {
  const int misalignment = misalignment16(arrays[0]);
  bool common_offset = misalignment % element_size == 0;
  for (int i = 1; i < count; ++i) {
    common_offset = common_offset && misalignment16(arrays[i]) == misalignment;
  }
  if (!common_offset) return VectorSplit{n, 0, n, 0};
  return split_for_vectors(n, misalignment, element_size);
}

// Launch shape (tuning.h): one 16-byte vector per work-item up to kMaxItems, past which each
// work-item loops, with 64-bit indexes.
using xpu_tuning::kMaxItems;
using xpu_tuning::kWorkGroupSize;

inline int64_t launch_items(const VectorSplit& split) {
  int64_t needed = split.vectors;
  if (split.head > needed) needed = split.head;
  if (split.tail > needed) needed = split.tail;
  if (needed > kMaxItems) needed = kMaxItems;
  return (needed + kWorkGroupSize - 1) / kWorkGroupSize * kWorkGroupSize;
}

// Work-item `item` of `items` takes the vectors, head and tail elements whose index is item
// modulo items: nothing is shared between work-items, so in place (in == out) is safe.
template <typename OnVector, typename OnElement>
inline void for_item_share(const VectorSplit& split, int64_t item, int64_t items,
                           const OnVector& on_vector, const OnElement& on_element) {
  for (int64_t w = item; w < split.vectors; w += items) on_vector(w);
  for (int64_t i = item; i < split.head; i += items) on_element(i);
  for (int64_t i = item; i < split.tail; i += items) on_element(split.tail_start + i);
}

template <typename Ops>
inline void forward_item(const VectorSplit& split, const typename Ops::Storage* in,
                         typename Ops::Storage* out, int64_t item, int64_t items) {
  using Vector = typename Ops::Vector;
  const Vector* in_vectors = reinterpret_cast<const Vector*>(in + split.head);
  Vector* out_vectors = reinterpret_cast<Vector*>(out + split.head);
  for_item_share(
      split, item, items, [&](int64_t w) { out_vectors[w] = Ops::forward_vector(in_vectors[w]); },
      [&](int64_t i) { out[i] = Ops::forward_element(in[i]); });
}

template <typename Ops>
inline void backward_item(const VectorSplit& split, const typename Ops::Storage* grad,
                          const typename Ops::Storage* saved, typename Ops::Storage* grad_in,
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

// ---- The gated ops (gated_element.h): a pass computes out from Op::kInputs dense arrays in
// OpMath, moving whole 16-byte vectors: out from {a, b}; grad_a from {grad_out, a, b}; grad_b
// from {grad_out, a}.
template <Gate kGate, typename Fmt, GatedPassKind kPass = GatedPassKind::kForward>
struct XpuGatedOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = kGatedInputs<kPass>;
  typename OpMath<Fmt>::Type threshold;
  Storage operator()(const Storage (&x)[kInputs]) const {
    return gated_pass<kGate, kPass, Fmt>(x, threshold);
  }
};

template <typename Op>
struct GatedPass {
  VectorSplit split;  // over every array of the pass
  const typename Op::Storage* in[Op::kInputs];
  typename Op::Storage* out;
  Op op;
};

template <typename Op>
GatedPass<Op> gated_pass(const Op& op, const void* const (&in)[Op::kInputs], void* out,
                         int64_t n) {
  GatedPass<Op> pass{};
  const void* arrays[Op::kInputs + 1];
  for (int k = 0; k < Op::kInputs; ++k) {
    pass.in[k] = static_cast<const typename Op::Storage*>(in[k]);
    arrays[k] = in[k];
  }
  pass.out = static_cast<typename Op::Storage*>(out);
  arrays[Op::kInputs] = out;
  pass.split = split_dense(n, int(sizeof(typename Op::Storage)), arrays, Op::kInputs + 1);
  pass.op = op;
  return pass;
}

template <typename Op>
inline void gated_item(const GatedPass<Op>& pass, int64_t item, int64_t items) {
  using Storage = typename Op::Storage;
  using Vector = Vector16<uint32_t>;
  constexpr int kInputs = Op::kInputs;
  constexpr int kElements = int(kVectorBytes / sizeof(Storage));
  const VectorSplit& split = pass.split;
  for_item_share(
      split, item, items,
      [&](int64_t w) {
        Storage x[kInputs][kElements];
        for (int k = 0; k < kInputs; ++k) {
          const Vector v = reinterpret_cast<const Vector*>(pass.in[k] + split.head)[w];
          std::memcpy(x[k], v.words, kVectorBytes);
        }
        Storage y[kElements];
        for (int i = 0; i < kElements; ++i) {
          Storage operands[kInputs];
          for (int k = 0; k < kInputs; ++k) operands[k] = x[k][i];
          y[i] = pass.op(operands);
        }
        Vector v;
        std::memcpy(v.words, y, kVectorBytes);
        reinterpret_cast<Vector*>(pass.out + split.head)[w] = v;
      },
      [&](int64_t i) {
        Storage operands[kInputs];
        for (int k = 0; k < kInputs; ++k) operands[k] = pass.in[k][i];
        pass.out[i] = pass.op(operands);
      });
}

}  // namespace relu_kernel
