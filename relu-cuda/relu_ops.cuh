// The ops of the CUDA kernels: tiny functors over relu-common's element functions, each in two
// forms (one 16-byte vector per input on out's grid, and one element), and which op each pass of
// each dtype runs (docs/architecture.md has the table). Every kernel is compiled once per op: an
// op object is the kernel's last parameter (empty, a LaneRule, or the gated ops' threshold), so
// the rarer formats share one op per element size with their constants read at launch.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "relu-common/activations.h"
#include "relu-common/relu_element.h"
#include "relu-cuda/memory.cuh"
#include "relu-cuda/tuning.h"

namespace relu_kernel {

// float16 / bfloat16 pairs through the hardware max (sm_80 and later), which returns the non-NaN
// operand and orders -0.0 below +0.0: relu_element.h's results in a ninth of the instructions.
template <typename Pair>
__device__ __forceinline__ Vector16<uint32_t> relu_pairs_by_max(Vector16<uint32_t> v) {
  static_assert(sizeof(Pair) == sizeof(uint32_t), "one pair per 32-bit word");
  const Pair zero{};
#pragma unroll
  for (int i = 0; i < Vector16<uint32_t>::kWords; ++i) {
    Pair pair;
    memcpy(&pair, &v.words[i], sizeof(pair));
    pair = __hmax2(pair, zero);
    memcpy(&v.words[i], &pair, sizeof(pair));
  }
  return v;
}

template <typename Fmt>
__device__ __forceinline__ Vector16<typename Fmt::Word> relu_vector16_gpu(
    Vector16<typename Fmt::Word> v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same<Fmt, Float16Format>::value) {
    return relu_pairs_by_max<__half2>(v);
  } else if constexpr (std::is_same<Fmt, BFloat16Format>::value) {
    return relu_pairs_by_max<__nv_bfloat162>(v);
  }
#endif
  return relu_forward<Fmt>(v);
}

// A pass's operands: in = {x} forward, {grad_out, result} backward; `n` elements each.
template <typename Storage, int kInputs>
struct Operands {
  const Storage* in[kInputs];
  Storage* out;
  int64_t n;
};

// A format's own relu, its constants compiled in.
template <typename Fmt>
struct ForwardOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 1;
  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[1]) const {
    using Word = typename Fmt::Word;
    return as_words<uint32_t>(relu_vector16_gpu<Fmt>(as_words<Word>(in[0])));
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[1]) const {
    return relu_forward<Fmt>(in[0]);
  }
};

template <typename Fmt>
struct BackwardOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[2]) const {
    using Word = typename Fmt::Word;
    return as_words<uint32_t>(
        relu_backward<Fmt>(as_words<Word>(in[0]), as_words<Word>(in[1])));
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[2]) const {
    return relu_backward<Fmt>(in[0], in[1]);
  }
};

// relu of any format of kBytes-byte elements: an IEEE float, a signed and an unsigned integer
// of one size differ only in the two constants of their rule.
template <int kBytes>
struct LanesOp {
  using Storage = UnsignedOfSize<kBytes>;
  using Word = typename std::conditional<kBytes == 8, uint64_t, uint32_t>::type;
  static constexpr int kInputs = 1;
  LaneRule<Word> rule;

  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[1]) const {
    Vector16<Word> v = as_words<Word>(in[0]);
#pragma unroll
    for (int i = 0; i < Vector16<Word>::kWords; ++i) {
      v.words[i] = lanes::relu_forward<8 * kBytes>(v.words[i], rule);
    }
    return as_words<uint32_t>(v);
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[1]) const {
    // The rule of one lane is the lowest lane of the word's.
    const LaneRule<Storage> element_rule{Storage(rule.signs), Storage(rule.nan_floor)};
    return lanes::keeps(in[0], element_rule) ? in[0] : Storage(0);
  }
};

// The gradient of any format of kBytes-byte elements: grad_out where relu(result) is not +0.
template <int kBytes>
struct LanesBackwardOp {
  using Storage = UnsignedOfSize<kBytes>;
  static constexpr int kInputs = 2;
  LaneRule<Storage> rule;  // one lane: the gradient is taken element by element

  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[2]) const {
    constexpr int kElements = int(kVectorBytes / sizeof(Storage));
    Storage grads[kElements];
    Storage results[kElements];
    memcpy(grads, in[0].words, kVectorBytes);
    memcpy(results, in[1].words, kVectorBytes);
#pragma unroll
    for (int i = 0; i < kElements; ++i) grads[i] = value({grads[i], results[i]});
    Vector16<uint32_t> out;
    memcpy(out.words, grads, kVectorBytes);
    return out;
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[2]) const {
    return lanes::keeps(in[1], rule) ? in[0] : Storage(0);
  }
};

// ---- relu_squared and the gated ops compute in OpMath. float16 / bfloat16 pairs convert by the
// hardware (exact up, RNE without FTZ down): relu-common's bits for every result but a NaN.
template <typename Fmt>
__device__ __forceinline__ float2 float2_of_pair(uint32_t word) {
  if constexpr (std::is_same<Fmt, Float16Format>::value) {
    __half2 pair;
    memcpy(&pair, &word, sizeof(pair));
    return __half22float2(pair);
  } else {
    __nv_bfloat162 pair;
    memcpy(&pair, &word, sizeof(pair));
    return __bfloat1622float2(pair);
  }
}

template <typename Fmt>
__device__ __forceinline__ uint32_t pair_of_float2(float2 value) {
  uint32_t word;
  if constexpr (std::is_same<Fmt, Float16Format>::value) {
    const __half2 pair = __float22half2_rn(value);
    memcpy(&word, &pair, sizeof(word));
  } else {
    const __nv_bfloat162 pair = __float22bfloat162_rn(value);
    memcpy(&word, &pair, sizeof(word));
  }
  return word;
}

template <typename Fmt>
constexpr bool kIsHalfPair =
    std::is_same<Fmt, Float16Format>::value || std::is_same<Fmt, BFloat16Format>::value;

// op.value over each element of one 16-byte vector per input.
template <typename Op>
__device__ __forceinline__ Vector16<uint32_t> vector_by_values(
    const Op& op, const Vector16<uint32_t> (&in)[Op::kInputs]) {
  using Storage = typename Op::Storage;
  constexpr int kElements = int(kVectorBytes / sizeof(Storage));
  Storage x[Op::kInputs][kElements];
#pragma unroll
  for (int k = 0; k < Op::kInputs; ++k) memcpy(x[k], in[k].words, kVectorBytes);
  Storage y[kElements];
#pragma unroll
  for (int i = 0; i < kElements; ++i) {
    Storage operands[Op::kInputs];
#pragma unroll
    for (int k = 0; k < Op::kInputs; ++k) operands[k] = x[k][i];
    y[i] = op.value(operands);
  }
  Vector16<uint32_t> out;
  memcpy(out.words, y, kVectorBytes);
  return out;
}

template <typename Fmt>
struct ReluSquaredOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 1;
  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[1]) const {
    if constexpr (kIsHalfPair<Fmt>) {
      // No NaN comes out (NaN -> +0), so the hardware's rounding is relu-common's.
      Vector16<uint32_t> v = in[0];
#pragma unroll
      for (int i = 0; i < Vector16<uint32_t>::kWords; ++i) {
        float2 f = float2_of_pair<Fmt>(v.words[i]);
        f.x = relu_squared_forward(f.x);
        f.y = relu_squared_forward(f.y);
        v.words[i] = pair_of_float2<Fmt>(f);
      }
      return v;
    } else {
      return vector_by_values(*this, in);
    }
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[1]) const {
    return activation_forward<Activation::kReluSquared, Fmt>(in[0]);
  }
};

// in = {grad_out, x}.
template <typename Fmt>
struct ReluSquaredBackwardOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[2]) const {
    if constexpr (kIsHalfPair<Fmt>) {
      // A NaN can come out (NaN grad, inf * 0), whose hardware pattern differs from
      // relu-common's (float16 0x7fff, not 0x7e00): rounded back by relu-common's function.
      Vector16<uint32_t> v;
#pragma unroll
      for (int i = 0; i < Vector16<uint32_t>::kWords; ++i) {
        const float2 g = float2_of_pair<Fmt>(in[0].words[i]);
        const float2 x = float2_of_pair<Fmt>(in[1].words[i]);
        const uint32_t low = from_opmath<Fmt>(relu_squared_backward(g.x, x.x));
        const uint32_t high = from_opmath<Fmt>(relu_squared_backward(g.y, x.y));
        v.words[i] = low | (high << 16);
      }
      return v;
    } else {
      return vector_by_values(*this, in);
    }
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[2]) const {
    return activation_backward<Activation::kReluSquared, Fmt>(in[0], in[1]);
  }
};

// ---- The gated ops (gated_element.h): x's halves as separate inputs, the threshold in OpMath.
// f over each lane of float16 / bfloat16 pairs in float; a NaN result may change pattern.
template <typename Fmt, int kInputs, typename F>
__device__ __forceinline__ Vector16<uint32_t> pairs_through_float(
    const Vector16<uint32_t> (&in)[kInputs], const F& f) {
  Vector16<uint32_t> v;
#pragma unroll
  for (int i = 0; i < Vector16<uint32_t>::kWords; ++i) {
    float low[kInputs], high[kInputs];
#pragma unroll
    for (int k = 0; k < kInputs; ++k) {
      const float2 pair = float2_of_pair<Fmt>(in[k].words[i]);
      low[k] = pair.x;
      high[k] = pair.y;
    }
    v.words[i] = pair_of_float2<Fmt>(make_float2(f(low), f(high)));
  }
  return v;
}

template <Gate kGate, GatedPassKind kPass, typename Fmt>
struct GatedPassOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = kGatedInputs<kPass>;
  typename OpMath<Fmt>::Type threshold;

  __device__ __forceinline__ Vector16<uint32_t> vector(
      const Vector16<uint32_t> (&in)[kInputs]) const {
    if constexpr (kIsHalfPair<Fmt>) {
      const float t = threshold;
      return pairs_through_float<Fmt>(
          in, [t](const float (&x)[kInputs]) { return gated_pass<kGate, kPass>(x, t); });
    } else {
      return vector_by_values(*this, in);
    }
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[kInputs]) const {
    return gated_pass<kGate, kPass, Fmt>(in, threshold);
  }
};

// Unsigned elements, whose relu is the identity: bytes, whatever the element size.
struct CopyOp {
  using Storage = uint8_t;
  static constexpr int kInputs = 1;
  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[1]) const {
    return in[0];
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[1]) const { return in[0]; }
};

// op.value of element i of dense inputs.
template <typename Op>
__device__ __forceinline__ typename Op::Storage value_at(
    const Op& op, const typename Op::Storage* const (&in)[Op::kInputs], int64_t i) {
  typename Op::Storage x[Op::kInputs];
#pragma unroll
  for (int k = 0; k < Op::kInputs; ++k) x[k] = in[k][i];
  return op.value(x);
}

// Element `t` (< head + tail) of those no vector covers: the head's, then the tail's.
template <typename Op>
__device__ __forceinline__ void edge_element(const Op& op,
                                             const typename Op::Storage* const (&in)[Op::kInputs],
                                             typename Op::Storage* out, const VectorSplit& split,
                                             int64_t t) {
  if (t < split.head) {
    out[t] = value_at(op, in, t);
  } else if (t - split.head < split.tail) {
    const int64_t i = split.tail_start + (t - split.head);
    out[i] = value_at(op, in, i);
  }
}

// ---- Which op each pass of format Fmt runs.

template <typename Fmt>
constexpr bool kIsFloat8 =
    Fmt::kKind == LaneKind::kIeeeFloat && sizeof(typename Fmt::Storage) == 1;

template <Activation kActivation, typename Fmt>
auto dense_forward_op() {
  constexpr int kBytes = int(sizeof(typename Fmt::Storage));
  if constexpr (kActivation == Activation::kReluSquared) {
    return ReluSquaredOp<Fmt>{};
  } else if constexpr (Fmt::kKind == LaneKind::kUnsignedInt) {
    return CopyOp{};
  } else if constexpr (std::is_same<Fmt, Float8FnuzFormat>::value) {
    // e4m3fnuz and e5m2fnuz: their one NaN, 0x80, is negative as an int8.
    return ForwardOp<Int8Format>{};
  } else if constexpr (kIsFloat8<Fmt>) {
    return LanesOp<kBytes>{LaneRule<typename LanesOp<kBytes>::Word>::template of<Fmt>()};
  } else {
    return ForwardOp<Fmt>{};
  }
}

template <Activation kActivation, typename Fmt>
auto dense_backward_op() {
  constexpr int kBytes = int(sizeof(typename Fmt::Storage));
  if constexpr (kActivation == Activation::kReluSquared) {
    return ReluSquaredBackwardOp<Fmt>{};
  } else if constexpr (Fmt::kNative) {
    return BackwardOp<Fmt>{};
  } else {
    return LanesBackwardOp<kBytes>{LaneRule<UnsignedOfSize<kBytes>>::template of<Fmt>()};
  }
}

template <Activation kActivation, typename Fmt>
auto strided_forward_op() {
  constexpr int kBytes = int(sizeof(typename Fmt::Storage));
  if constexpr (kActivation == Activation::kReluSquared) {
    return ReluSquaredOp<Fmt>{};  // the dense pass's: 4 formats only
  } else if constexpr (tuning::kOwnStridedKernels<Fmt>) {
    return ForwardOp<Fmt>{};
  } else if constexpr (std::is_same<Fmt, Float8FnuzFormat>::value) {
    return ForwardOp<Int8Format>{};
  } else {
    return LanesOp<kBytes>{LaneRule<typename LanesOp<kBytes>::Word>::template of<Fmt>()};
  }
}

template <Activation kActivation, typename Fmt>
auto strided_backward_op() {
  return dense_backward_op<kActivation, Fmt>();
}

}  // namespace relu_kernel
