// The ReLU of one value and of one 16-byte word, for every dtype: the one place where the
// package's semantics live. Included unchanged by the CPU (C++), CUDA and SYCL backends, so
// the CPU test suite exercises the element logic that the GPU kernels run.
//
// Semantics, everywhere: out = x > 0 ? x : 0.
//   NaN > 0 and -0.0 > 0 are both false, so NaN -> +0 and -0.0 -> +0.0 (as upstream
//   kernels-community/relu); +inf stays +inf, -inf -> +0.
//
// Two forms of the same function:
//   relu_value(x)        a native arithmetic value (float, double, signed/unsigned ints);
//   relu_lanes<Fmt>(w)   every lane of an unsigned machine word, lanes in format Fmt, with
//                        bit operations only ("SIMD within a register"). The floats
//                        narrower than 32 bits (float16, bfloat16, the float8 formats)
//                        always take this form: no conversion to float, no dependence on a
//                        half or float8 type that differs between CPU, CUDA and SYCL.
// relu_word16<Fmt> applies one of them to a 16-byte word, the unit of every GPU access.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define RELU_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RELU_HOST_DEVICE inline
#endif

namespace relu_kernel {

template <typename T>
RELU_HOST_DEVICE T relu_value(T x) {
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
  // Native formats compute with relu_value; floats narrower than 4 bytes have no native
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

// ReLU of every lane of `word`. Lanes never interact: no carry or borrow crosses a lane.
template <typename Fmt, typename Word>
RELU_HOST_DEVICE Word relu_lanes(Word word) {
  static_assert(std::is_unsigned<Word>::value, "lanes live in an unsigned word");
  static_assert((8 * sizeof(Word)) % Fmt::kLaneBits == 0, "a word holds whole lanes");
  constexpr int kBits = Fmt::kLaneBits;
  if (Fmt::kKind == LaneKind::kUnsignedInt) return word;
  constexpr Word kSigns = broadcast_lane<Word, kBits>(uint64_t(1) << (kBits - 1));
  // `doomed`: the sign bit of each lane that must become +0, every other bit clear.
  Word doomed = Word(word & kSigns);
  if (Fmt::kKind == LaneKind::kIeeeFloat) {
    // A lane with its sign bit forced on is at least 0x80..0 >= inf + 1, so subtracting
    // inf + 1 never borrows from the next lane, and the result keeps its sign bit exactly
    // when the magnitude exceeds kInfBits: the lane is a NaN.
    constexpr Word kInfPlusOne = broadcast_lane<Word, kBits>(Fmt::kInfBits + 1);
    const Word nan_signs = Word(Word(Word(word | kSigns) - kInfPlusOne) & kSigns);
    doomed = Word(doomed | nan_signs);
  }
  // Spread each doomed sign bit over its lane: (s << 1) - (s >> (kBits - 1)) is 2^kBits - 1
  // in that lane; the top lane's shifted-out bit wraps away harmlessly.
  const Word lane_mask = Word(Word(doomed << 1) - Word(doomed >> (kBits - 1)));
  return Word(word & Word(~lane_mask));
}

// ReLU of one stored element.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_element(typename Fmt::Storage x) {
  if constexpr (Fmt::kNative) {
    return relu_value(x);
  } else {
    return relu_lanes<Fmt>(x);
  }
}

// Gradient of one element: grad_out where the forward output is > 0, else +0. `result` is
// relu's output, > 0 exactly where x > 0, so the gradient at NaN, 0 and -0.0 is 0.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_backward_element(typename Fmt::Storage grad_out,
                                                             typename Fmt::Storage result) {
  using Storage = typename Fmt::Storage;
  return relu_element<Fmt>(result) != Storage(0) ? grad_out : Storage(0);
}

// One 16-byte word: the unit every GPU thread loads and stores.
template <typename Fmt>
struct alignas(16) Word16 {
  using Word = typename Fmt::Word;
  static constexpr int kWords = int(16 / sizeof(Word));
  static constexpr int kElements = int(16 / sizeof(typename Fmt::Storage));
  Word words[kWords];
};

// ReLU of one machine word of packed elements.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Word relu_word(typename Fmt::Word word) {
  using Storage = typename Fmt::Storage;
  using Word = typename Fmt::Word;
  if constexpr (Fmt::kKind == LaneKind::kIeeeFloat && Fmt::kNative) {
    // float and double: a compare and select per lane beats the bit form on every ISA.
    constexpr int kLanes = int(sizeof(Word) / sizeof(Storage));
    Storage lanes[kLanes];
    std::memcpy(lanes, &word, sizeof(Word));
    for (int i = 0; i < kLanes; ++i) lanes[i] = relu_value(lanes[i]);
    std::memcpy(&word, lanes, sizeof(Word));
    return word;
  } else {
#if defined(__CUDA_ARCH__)
    if constexpr (Fmt::kKind == LaneKind::kSignedInt && Fmt::kLaneBits == 8) {
      return __vmaxs4(word, 0u);  // four signed bytes at once
    }
#endif
    return relu_lanes<Fmt>(word);
  }
}

template <typename Fmt>
RELU_HOST_DEVICE Word16<Fmt> relu_word16(Word16<Fmt> v) {
  for (int i = 0; i < Word16<Fmt>::kWords; ++i) v.words[i] = relu_word<Fmt>(v.words[i]);
  return v;
}

template <typename Fmt>
RELU_HOST_DEVICE Word16<Fmt> relu_backward_word16(Word16<Fmt> grad_out, Word16<Fmt> result) {
  using Storage = typename Fmt::Storage;
  Storage grads[Word16<Fmt>::kElements];
  Storage results[Word16<Fmt>::kElements];
  std::memcpy(grads, grad_out.words, 16);
  std::memcpy(results, result.words, 16);
  for (int i = 0; i < Word16<Fmt>::kElements; ++i) {
    grads[i] = relu_backward_element<Fmt>(grads[i], results[i]);
  }
  std::memcpy(grad_out.words, grads, 16);
  return grad_out;
}

}  // namespace relu_kernel
