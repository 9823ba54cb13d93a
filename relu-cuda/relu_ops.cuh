// What the CUDA kernels compute, as tiny functors over the element functions of
// relu-common (activations.h), which of them each activation's and dtype's passes run, and the
// operands of one pass. Shared by the dense kernels (relu_cuda.cu) and the strided ones
// (strided.cuh), which differ only in where the elements are.
//
// Every kernel is compiled once per op, not per dtype. An op is an object passed to the
// kernel (the last parameter): empty for the per-format ops, the two constants of lanes::relu_forward
// (LaneRule) for the ops that serve every format of one element size, the threshold for the
// gated ops.
//
// relu:
//   pass              float32, float64    float16, bfloat16    int8..int64  float8   uint8..64
//   dense forward     ForwardOp<format>   ForwardOp<format>    ForwardOp    (below)  CopyOp
//   dense backward    BackwardOp<format>  LanesBackwardOp<2>   (no gradient)
//   strided forward   ForwardOp<format> for float32, float16, bfloat16, int8 (and the fnuz
//                     pair), uint8; LanesOp<element size> for the other dtypes
//   strided backward  as dense backward
// float8 dense: e4m3fn and e5m2 LanesOp<1>; e4m3fnuz and e5m2fnuz ForwardOp<int8>.
// relu_squared (float32, float64, float16, bfloat16 only): ReluSquaredOp<format> forward and
// ReluSquaredBackwardOp<format> backward, dense and strided alike (the same forms and walk).
// relu_and_mul and relu_squared_and_mul (the same four dtypes), strided only (the binding walks
// x's halves as two inputs): GatedOp<gate, format> forward; backward GatedGradAOp<gate, format>
// then GatedGradBOp<gate, format>, two passes over one layout.
//
// The per-format ops are the kernels of before the sharing, instruction for instruction
// (hardware max for float16/bfloat16 and int8, compare-and-select for float and double, the
// bit form for the other integers). Shared, with the format's constants read at launch: the
// float8 formats (their relu differs only by its NaN limit; the fnuz pair's is int8's), the
// 16-bit gradients (likewise), and the strided forward passes of the rarer dtypes: one walk
// per element size, the element function on the bits. Unsigned formats move as bytes in the
// dense pass: one copy for all four. relu_squared's ops compute in float (double for
// float64), so they share nothing with relu's bit forms.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "relu-common/activations.h"
#include "relu-common/relu_element.h"
#include "relu-cuda/memory.cuh"

namespace relu_kernel {

// relu_forward for the GPU: float16 and bfloat16 pairs through max(x, +0) (HMNMX2) on sm_80
// and later, whose max returns the non-NaN operand and orders -0.0 below +0.0 (cuda_fp16.h,
// cuda_bf16.h), so NaN -> +0 and -0.0 -> +0.0 as relu_element.h; 4 instructions per vector
// instead of the bit form's 36. Older GPUs and every other format keep relu_forward.
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

// The operands of one pass: kInputs input streams and one output, all of `n` elements of
// Storage. For the forward pass in[0] = x; for the backward pass in = {grad_out, result}.
template <typename Storage, int kInputs>
struct Pass {
  const Storage* in[kInputs];
  Storage* out;
  int64_t n;
};

// An op computes one output from its inputs in two forms: from one 16-byte vector of each
// input on out's grid (vector), and from the values of one element (value).

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

// The unsigned storage of an element size.
template <int kBytes>
using UnsignedOfBytes = typename std::conditional<
    kBytes == 1, uint8_t,
    typename std::conditional<
        kBytes == 2, uint16_t,
        typename std::conditional<kBytes == 4, uint32_t, uint64_t>::type>::type>::type;

// relu of any format of kBytes-byte elements by the format's rule (lanes::relu_forward, lanes::keeps):
// what an IEEE float, a signed and an unsigned integer of one size differ in is two constants.
template <int kBytes>
struct LanesOp {
  using Storage = UnsignedOfBytes<kBytes>;
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
  using Storage = UnsignedOfBytes<kBytes>;
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

// ---- relu_squared (relu_squared_element.h): a forward and a backward op per gradient format,
// in OpMath element by element.

// float16 / bfloat16 pairs to float and back by the hardware's conversions (exact up, RNE
// without FTZ down): bit-identical to relu_squared_element.h's for every result but a NaN.
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

// ---- The gated ops (gated_element.h): x's halves as separate inputs, in OpMath element by
// element, the kReluAndMul gate's threshold (in OpMath) their state. Forward in = {a, b};
// GatedGradAOp in = {grad_out, a, b}; GatedGradBOp in = {grad_out, a}.

// f over each lane of float16 / bfloat16 pairs, to float and back by the hardware (exact up,
// RNE without FTZ down): gated_element.h's bits for every result but a NaN, which stays a NaN
// of another pattern (gated_element.h leaves its sign and payload unspecified).
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

template <Gate kGate, typename Fmt>
struct GatedOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  typename OpMath<Fmt>::Type threshold;

  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[2]) const {
    if constexpr (kIsHalfPair<Fmt>) {
      const float t = threshold;
      return pairs_through_float<Fmt>(
          in, [t](const float (&x)[2]) { return gated_forward<kGate>(x[0], x[1], t); });
    } else {
      return vector_by_values(*this, in);
    }
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[2]) const {
    return gated_forward<kGate, Fmt>(in[0], in[1], threshold);
  }
};

template <Gate kGate, typename Fmt>
struct GatedGradAOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 3;
  typename OpMath<Fmt>::Type threshold;

  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[3]) const {
    if constexpr (kIsHalfPair<Fmt>) {
      const float t = threshold;
      return pairs_through_float<Fmt>(in, [t](const float (&x)[3]) {
        return gated_grad_a<kGate>(x[0], x[1], x[2], t);
      });
    } else {
      return vector_by_values(*this, in);
    }
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[3]) const {
    return gated_grad_a<kGate, Fmt>(in[0], in[1], in[2], threshold);
  }
};

template <Gate kGate, typename Fmt>
struct GatedGradBOp {
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  typename OpMath<Fmt>::Type threshold;

  __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[2]) const {
    if constexpr (kIsHalfPair<Fmt>) {
      const float t = threshold;
      return pairs_through_float<Fmt>(
          in, [t](const float (&x)[2]) { return gated_grad_b<kGate>(x[0], x[1], t); });
    } else {
      return vector_by_values(*this, in);
    }
  }
  __device__ __forceinline__ Storage value(const Storage (&in)[2]) const {
    return gated_grad_b<kGate, Fmt>(in[0], in[1], threshold);
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

// ---- Which op each pass of format Fmt runs (the table at the top).

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
    // Relu of e4m3fnuz and e5m2fnuz is int8's: their one NaN, 0x80, is negative as an int8.
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
    return LanesBackwardOp<kBytes>{LaneRule<UnsignedOfBytes<kBytes>>::template of<Fmt>()};
  }
}

// The dtypes whose views keep their own strided kernels: the bit form shared by every format
// of a size (LanesOp) cost their views 2-16% of the GPU time of the per-format kernels on the
// H200 (int8 and uint8 rows most; float32 and the 16-bit floats 2-6% at some sizes;
// benchmarks/studies/kernel_sharing.py, L2_BAND_CLIFF.md). The rarer
// dtypes (float64, int16-64, uint16-64, float8) share their size's LanesOp.
template <typename Fmt>
constexpr bool kOwnStridedKernels =
    std::is_same<Fmt, Float32Format>::value || std::is_same<Fmt, Float16Format>::value ||
    std::is_same<Fmt, BFloat16Format>::value || std::is_same<Fmt, Int8Format>::value ||
    std::is_same<Fmt, UInt8Format>::value;

template <Activation kActivation, typename Fmt>
auto strided_forward_op() {
  constexpr int kBytes = int(sizeof(typename Fmt::Storage));
  if constexpr (kActivation == Activation::kReluSquared) {
    return ReluSquaredOp<Fmt>{};  // the dense pass's: 4 formats only
  } else if constexpr (kOwnStridedKernels<Fmt>) {
    return ForwardOp<Fmt>{};
  } else if constexpr (std::is_same<Fmt, Float8FnuzFormat>::value) {
    return ForwardOp<Int8Format>{};  // as the dense pass: int8's relu
  } else {
    return LanesOp<kBytes>{LaneRule<typename LanesOp<kBytes>::Word>::template of<Fmt>()};
  }
}

// The strided backward takes the dense backward's ops: for relu float32 and float64 their own
// (the one gradient dtype of their size each), float16 and bfloat16 the shared 16-bit one.
template <Activation kActivation, typename Fmt>
auto strided_backward_op() {
  return dense_backward_op<kActivation, Fmt>();
}

}  // namespace relu_kernel
