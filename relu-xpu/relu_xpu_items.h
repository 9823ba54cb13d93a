// The work of the XPU kernels in plain C++: how a flat range of elements is split into an
// unaligned head, 16-byte words and a tail, how many work-items run, and what one work-item
// does. relu_xpu.cpp only wraps these in SYCL kernels; everything here also compiles with a
// host compiler, so tests/xpu_items_check.cpp runs it on the CPU (every work-item in turn)
// against the tests' reference, for every dtype, size and alignment. The SYCL glue itself
// is not run by this project (see relu-xpu/README.md).
#pragma once

#include <cstdint>

#include "relu-common/relu_element.h"

namespace relu_kernel {

// What the XPU kernel does to format Fmt: the element type it moves, and the ReLU of one
// element and of one 16-byte word (relu-common/relu_element.h).
template <typename Fmt>
struct XpuOps {
  using Element = typename Fmt::Storage;
  using Vec16 = Word16<Fmt>;
  static constexpr int kPerVec16 = Vec16::kElements;

  static Element relu_element(Element x) { return relu_kernel::relu_element<Fmt>(x); }
  static Vec16 relu_vec16(Vec16 v) { return relu_word16<Fmt>(v); }
  static Element relu_backward_element(Element grad, Element result) {
    return relu_kernel::relu_backward_element<Fmt>(grad, result);
  }
  static Vec16 relu_backward_vec16(Vec16 grad, Vec16 result) {
    return relu_backward_word16<Fmt>(grad, result);
  }
};

// float64 as bit patterns, with the bit form relu_lanes: no double in the kernel at all.
// Intel's DG2 GPUs (Arc A-series, Flex) have no fp64 unit; kernel-builder compiles with
// -cl-poison-unsupported-fp64-kernels, and a kernel that uses the double type at all fails
// there at launch ("Required aspect fp64 is not supported on the device"). With integer
// words, relu on float64 tensors needs no fp64 hardware. relu_lanes<Float64Format> is
// checked against the reference like the rest of the header (tests/relu_element_check.cpp).
template <>
struct XpuOps<Float64Format> {
  using Element = uint64_t;
  using Vec16 = Word16<Float64Format>;  // two uint64_t words
  static constexpr int kPerVec16 = Vec16::kElements;

  static Element relu_element(Element x) { return relu_lanes<Float64Format>(x); }
  static Vec16 relu_vec16(Vec16 v) {
    for (int i = 0; i < Vec16::kWords; ++i) v.words[i] = relu_lanes<Float64Format>(v.words[i]);
    return v;
  }
  // relu(result) is +0 (all bits clear) exactly where result > 0 is false.
  static Element relu_backward_element(Element grad, Element result) {
    return relu_lanes<Float64Format>(result) != 0 ? grad : Element(0);
  }
  static Vec16 relu_backward_vec16(Vec16 grad, Vec16 result) {
    for (int i = 0; i < Vec16::kWords; ++i) {
      grad.words[i] = relu_backward_element(grad.words[i], result.words[i]);
    }
    return grad;
  }
};

// n elements as [head | vec16s 16-byte words | tail], the words 16-byte aligned in every
// array the kernel touches. When the arrays disagree on their offset within 16 bytes (an
// unaligned view against a fresh output, say) no element index is aligned in all of them:
// then everything is head, one element per access.
struct FlatSplit {
  int64_t head;
  int64_t vec16s;
  int64_t tail;
};

inline FlatSplit split_flat(int64_t n, int element_size, const void* const* arrays, int count) {
  const uintptr_t offset = reinterpret_cast<uintptr_t>(arrays[0]) % 16;
  bool common_offset = offset % uintptr_t(element_size) == 0;
  for (int i = 1; i < count; ++i) {
    common_offset = common_offset && reinterpret_cast<uintptr_t>(arrays[i]) % 16 == offset;
  }
  if (!common_offset) return FlatSplit{n, 0, 0};
  int64_t head = int64_t((16 - offset) % 16) / element_size;
  if (head > n) head = n;
  const int64_t per_vec16 = 16 / element_size;
  const int64_t vec16s = (n - head) / per_vec16;
  return FlatSplit{head, vec16s, n - head - vec16s * per_vec16};
}

// Launch shape. Every Intel GPU that PyTorch's XPU backend supports takes work-groups of 256
// (the limit is 512 or 1024 there). One 16-byte word per work-item up to kMaxItems, which
// keeps the global range below 2^31: DPC++ compiles with -fsycl-id-queries-fit-in-int unless
// told otherwise (kernel-builder does not), so a larger range would overflow the ids. Past
// it, each work-item loops, with 64-bit indexes. Neither number has been measured on an
// Intel GPU (relu-xpu/README.md).
constexpr int64_t kWorkGroupSize = 256;
constexpr int64_t kMaxItems = int64_t(1) << 28;

inline int64_t launch_items(const FlatSplit& split) {
  int64_t needed = split.vec16s;
  if (split.head > needed) needed = split.head;
  if (split.tail > needed) needed = split.tail;
  if (needed > kMaxItems) needed = kMaxItems;
  return (needed + kWorkGroupSize - 1) / kWorkGroupSize * kWorkGroupSize;
}

// The share of work-item `item` of `items`: the words, the head elements and the tail
// elements whose index is item modulo items. on_vec16(w) handles word w of the aligned body,
// on_element(i) element i of the whole range. Nothing is shared between work-items, so
// in-place calls (in == out) are safe.
template <typename OnVec16, typename OnElement>
inline void for_item_share(const FlatSplit& split, int per_vec16, int64_t item, int64_t items,
                           const OnVec16& on_vec16, const OnElement& on_element) {
  for (int64_t w = item; w < split.vec16s; w += items) on_vec16(w);
  for (int64_t i = item; i < split.head; i += items) on_element(i);
  const int64_t tail_start = split.head + split.vec16s * per_vec16;
  for (int64_t i = item; i < split.tail; i += items) on_element(tail_start + i);
}

template <typename Ops>
inline void relu_item(const FlatSplit& split, const typename Ops::Element* in,
                      typename Ops::Element* out, int64_t item, int64_t items) {
  using Vec16 = typename Ops::Vec16;
  const Vec16* in16 = reinterpret_cast<const Vec16*>(in + split.head);
  Vec16* out16 = reinterpret_cast<Vec16*>(out + split.head);
  for_item_share(
      split, Ops::kPerVec16, item, items,
      [&](int64_t w) { out16[w] = Ops::relu_vec16(in16[w]); },
      [&](int64_t i) { out[i] = Ops::relu_element(in[i]); });
}

template <typename Ops>
inline void relu_backward_item(const FlatSplit& split, const typename Ops::Element* grad,
                               const typename Ops::Element* result,
                               typename Ops::Element* grad_in, int64_t item, int64_t items) {
  using Vec16 = typename Ops::Vec16;
  const Vec16* grad16 = reinterpret_cast<const Vec16*>(grad + split.head);
  const Vec16* result16 = reinterpret_cast<const Vec16*>(result + split.head);
  Vec16* grad_in16 = reinterpret_cast<Vec16*>(grad_in + split.head);
  for_item_share(
      split, Ops::kPerVec16, item, items,
      [&](int64_t w) { grad_in16[w] = Ops::relu_backward_vec16(grad16[w], result16[w]); },
      [&](int64_t i) { grad_in[i] = Ops::relu_backward_element(grad[i], result[i]); });
}

}  // namespace relu_kernel
