// The ReLU of one value and of one 16-byte word, for every dtype: the one place where the
// package's semantics live. Included unchanged by the CPU (C++), CUDA and SYCL backends, so
// the CPU test suite exercises the element logic that the GPU kernels run.
//
// Semantics, everywhere: out = x > 0 ? x : 0.
//   NaN > 0 and -0.0 > 0 are both false, so NaN -> +0 and -0.0 -> +0.0 (as upstream
//   kernels-community/relu); +inf stays +inf, -inf -> +0.
//
// Two forms of the same function:
//   relu_forward(x)        a native arithmetic value (float, double, signed/unsigned ints);
//   lanes::relu_forward<Fmt>(w)   every lane of an unsigned machine word, lanes in format Fmt, with
//                        bit operations only ("SIMD within a register"). The floats
//                        narrower than 32 bits (float16, bfloat16, the float8 formats)
//                        always take this form: no conversion to float, no dependence on a
//                        half or float8 type that differs between CPU, CUDA and SYCL. Its
//                        two constants (LaneRule) can also come at run time, so that one
//                        compiled loop serves every format of a lane width.
// relu_forward<Fmt> applies one of them to a 16-byte vector (vector16.h), the unit of every
// GPU access.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "relu-common/vector16.h"  // Vector16, RELU_HOST_DEVICE

namespace relu_kernel {

template <typename T>
RELU_HOST_DEVICE T relu_forward(T x) {
  return x > T(0) ? x : T(0);
}

enum class LaneKind { kSignedInt, kUnsignedInt, kIeeeFloat };

// How one dtype's elements are stored: Storage is the C++ type the kernels load and store
// (raw bit patterns for the floats narrower than 32 bits). For IEEE-like lanes, kInfBits is
// the largest magnitude that is not a NaN: a lane whose bits without the sign exceed it is a
// NaN. That is +inf where the format has one, else its largest finite value.
template <typename Storage_, LaneKind kKind_, uint64_t kInfBits_ = 0>
struct Format {
  using Storage = Storage_;
  static constexpr LaneKind kKind = kKind_;
  static constexpr int kLaneBits = 8 * sizeof(Storage_);
  static constexpr uint64_t kInfBits = kInfBits_;
  // Native formats compute with relu_forward; floats narrower than 4 bytes have no native
  // type common to CPU, CUDA and SYCL.
  static constexpr bool kNative = !(kKind_ == LaneKind::kIeeeFloat && sizeof(Storage_) < 4);
  // Whether relu has a gradient in this format: float32/16, bfloat16, float64, not float8
  // (relu_dtypes.h derives the gradient checks and names from this).
  static constexpr bool kHasGradient = kKind_ == LaneKind::kIeeeFloat && sizeof(Storage_) >= 2;
  // GPU words: 32-bit registers, 64-bit ones only for 64-bit lanes.
  using Word = typename std::conditional<sizeof(Storage_) == 8, uint64_t, uint32_t>::type;
};

using Float32Format = Format<float, LaneKind::kIeeeFloat, 0x7f800000u>;
using Float64Format = Format<double, LaneKind::kIeeeFloat, 0x7ff0000000000000ull>;
using Float16Format = Format<uint16_t, LaneKind::kIeeeFloat, 0x7c00u>;
using BFloat16Format = Format<uint16_t, LaneKind::kIeeeFloat, 0x7f80u>;
// float8 (OCP FP8 and the "fnuz" variants): 1 sign bit, then exponent and mantissa.
//   e5m2:  0x7c is +inf, 0x7d..0x7f NaN (IEEE-like).
//   e4m3fn: no inf; 0x7e is the largest finite value (448), 0x7f NaN.
//   e4m3fnuz, e5m2fnuz: no inf and no -0; 0x7f is the largest finite value and the only NaN
//     is 0x80, whose sign bit sends it to +0 anyway. Relu is the same bit function on both
//     (the one of int8), so they share one format.
using Float8E5M2Format = Format<uint8_t, LaneKind::kIeeeFloat, 0x7cu>;
using Float8E4M3FnFormat = Format<uint8_t, LaneKind::kIeeeFloat, 0x7eu>;
using Float8FnuzFormat = Format<uint8_t, LaneKind::kIeeeFloat, 0x7fu>;
using Int8Format = Format<int8_t, LaneKind::kSignedInt>;
using Int16Format = Format<int16_t, LaneKind::kSignedInt>;
using Int32Format = Format<int32_t, LaneKind::kSignedInt>;
using Int64Format = Format<int64_t, LaneKind::kSignedInt>;
// Unsigned lanes are never negative: relu is the identity (a copy).
using UInt8Format = Format<uint8_t, LaneKind::kUnsignedInt>;
using UInt16Format = Format<uint16_t, LaneKind::kUnsignedInt>;
using UInt32Format = Format<uint32_t, LaneKind::kUnsignedInt>;
using UInt64Format = Format<uint64_t, LaneKind::kUnsignedInt>;

// `lane` repeated in every kLaneBits-wide lane of a Word.
template <typename Word, int kLaneBits>
RELU_HOST_DEVICE constexpr Word broadcast_lane(uint64_t lane) {
  Word word = 0;
  for (int shift = 0; shift < int(8 * sizeof(Word)); shift += kLaneBits) {
    word = Word(word | Word(Word(lane) << shift));
  }
  return word;
}

// The two constants of lanes::relu_forward, each repeated in every lane of a Word:
//   signs:     each lane's sign bit; 0 for unsigned lanes, which are never negative;
//   nan_floor: for IEEE-like lanes kInfBits + 1: a lane whose bits without the sign reach it is
//              a NaN. Integer lanes have no NaN: there it is `signs`, which makes the NaN test
//              of lanes::relu_forward come out 0 (and 0 for unsigned lanes).
// Format Fmt's rule as compile-time constants (what a loop or kernel compiled for one format
// folds in) ...
template <typename Fmt, typename Word>
struct FormatLaneRule {
  static constexpr Word signs =
      Fmt::kKind == LaneKind::kUnsignedInt
          ? Word(0)
          : broadcast_lane<Word, Fmt::kLaneBits>(uint64_t(1) << (Fmt::kLaneBits - 1));
  static constexpr Word nan_floor =
      Fmt::kKind == LaneKind::kIeeeFloat ? broadcast_lane<Word, Fmt::kLaneBits>(Fmt::kInfBits + 1)
                                         : signs;
};

// ... and as values, for a kernel that serves several formats and takes the rule at launch.
template <typename Word>
struct LaneRule {
  Word signs;
  Word nan_floor;

  template <typename Fmt>
  static constexpr LaneRule of() {
    return LaneRule{FormatLaneRule<Fmt, Word>::signs, FormatLaneRule<Fmt, Word>::nan_floor};
  }
};

// ReLU of every lane of `word` by `rule` (either form above): lanes never interact (no carry
// or borrow crosses a lane). kNanLanes: whether the lanes can hold NaNs (IEEE-like ones);
// true for a rule known only at run time, where an integer rule then adds nothing.
template <int kLaneBits, bool kNanLanes, typename Word, typename Rule>
RELU_HOST_DEVICE Word lanes::relu_forward(Word word, Rule rule) {
  static_assert(std::is_unsigned<Word>::value, "lanes live in an unsigned word");
  static_assert((8 * sizeof(Word)) % kLaneBits == 0, "a word holds whole lanes");
  // `zeroed_signs`: the sign bit of each lane that must become +0, every other bit clear.
  Word zeroed_signs = Word(word & rule.signs);
  if constexpr (kNanLanes) {
    // A lane with its sign bit forced on is at least 0x80..0 >= nan_floor, so subtracting
    // nan_floor never borrows from the next lane, and the result keeps its sign bit exactly
    // when the magnitude reaches nan_floor: the lane is a NaN.
    const Word nan_signs = Word(Word(Word(word | rule.signs) - rule.nan_floor) & rule.signs);
    zeroed_signs = Word(zeroed_signs | nan_signs);
  }
  // Spread each zeroed_signs sign bit over its lane: (s << 1) - (s >> (kLaneBits - 1)) is
  // 2^kLaneBits - 1 in that lane; the top lane's shifted-out bit wraps away harmlessly.
  const Word lane_mask = Word(Word(zeroed_signs << 1) - Word(zeroed_signs >> (kLaneBits - 1)));
  return Word(word & Word(~lane_mask));
}

// Whether relu keeps one element (relu(x) == x != +0, i.e. x > 0) by `rule`: x is neither
// +0, negative nor a NaN exactly when x - 1 (wrapping at 0) is below nan_floor - 1, the
// largest magnitude that is not a NaN (signs - 1 for a signed rule; all ones for an unsigned
// one, whose elements are kept unless 0). One compare where lanes::relu_forward takes six operations:
// what a gradient needs of its result, with the rule known only at run time.
template <typename Storage>
RELU_HOST_DEVICE bool lanes::keeps(Storage x, LaneRule<Storage> rule) {
  static_assert(std::is_unsigned<Storage>::value, "an element's bits");
  return Storage(x - 1) < Storage(rule.nan_floor - 1);
}

// ReLU of every lane of `word` by a rule known only at run time: a lone lane takes the
// compare of lanes::keeps and a select, several lanes lanes::relu_forward.
template <int kLaneBits, typename Word>
RELU_HOST_DEVICE Word lanes::relu_forward(Word word, LaneRule<Word> rule) {
  if constexpr (kLaneBits == 8 * sizeof(Word)) {
    return lanes::keeps(word, rule) ? word : Word(0);
  } else {
    return lanes::relu_forward<kLaneBits, true>(word, rule);
  }
}

// lanes::relu_forward with the rule of format Fmt, known at compile time.
template <typename Fmt, typename Word>
RELU_HOST_DEVICE Word lanes::relu_forward(Word word) {
  if constexpr (Fmt::kKind == LaneKind::kUnsignedInt) {
    return word;
  } else {
    return lanes::relu_forward<Fmt::kLaneBits, Fmt::kKind == LaneKind::kIeeeFloat>(
        word, FormatLaneRule<Fmt, Word>{});
  }
}

// ReLU of one stored element.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_forward(typename Fmt::Storage x) {
  if constexpr (Fmt::kNative) {
    return relu_forward(x);
  } else {
    return lanes::relu_forward<Fmt>(x);
  }
}

// Gradient of one element: grad_out where the forward output is > 0, else +0. `result` is
// relu's output, > 0 exactly where x > 0, so the gradient at NaN, 0 and -0.0 is 0.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_backward(typename Fmt::Storage grad_out,
                                                             typename Fmt::Storage result) {
  using Storage = typename Fmt::Storage;
  return relu_forward<Fmt>(result) != Storage(0) ? grad_out : Storage(0);
}

// ReLU of one machine word of packed elements.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Word relu_forward(typename Fmt::Word word) {
  using Storage = typename Fmt::Storage;
  using Word = typename Fmt::Word;
  if constexpr (Fmt::kKind == LaneKind::kIeeeFloat && Fmt::kNative) {
    // float and double: a compare and select per lane beats the bit form on every ISA.
    constexpr int kLanes = int(sizeof(Word) / sizeof(Storage));
    Storage lanes[kLanes];
    std::memcpy(lanes, &word, sizeof(Word));
    for (int i = 0; i < kLanes; ++i) lanes[i] = relu_forward(lanes[i]);
    std::memcpy(&word, lanes, sizeof(Word));
    return word;
  } else {
#if defined(__CUDA_ARCH__)
    if constexpr (Fmt::kKind == LaneKind::kSignedInt && Fmt::kLaneBits == 8) {
      return __vmaxs4(word, 0u);  // four signed bytes at once
    }
#endif
    return lanes::relu_forward<Fmt>(word);
  }
}

// ReLU of one 16-byte vector of Fmt's words.
template <typename Fmt>
RELU_HOST_DEVICE Vector16<typename Fmt::Word> relu_forward(Vector16<typename Fmt::Word> v) {
  for (int i = 0; i < Vector16<typename Fmt::Word>::kWords; ++i) {
    v.words[i] = relu_forward<Fmt>(v.words[i]);
  }
  return v;
}

// The gradient of one 16-byte vector, element by element.
template <typename Fmt>
RELU_HOST_DEVICE Vector16<typename Fmt::Word> relu_backward(
    Vector16<typename Fmt::Word> grad_out, Vector16<typename Fmt::Word> result) {
  using Storage = typename Fmt::Storage;
  constexpr int kElements = int(kVectorBytes / sizeof(Storage));
  Storage grads[kElements];
  Storage results[kElements];
  std::memcpy(grads, grad_out.words, kVectorBytes);
  std::memcpy(results, result.words, kVectorBytes);
  for (int i = 0; i < kElements; ++i) {
    grads[i] = relu_backward<Fmt>(grads[i], results[i]);
  }
  std::memcpy(grad_out.words, grads, kVectorBytes);
  return grad_out;
}

}  // namespace relu_kernel
