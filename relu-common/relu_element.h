// ReLU for every dtype, the package's semantics in one place: out = x > 0 ? x : 0, so NaN,
// -0.0 and -inf give +0 (as upstream kernels-community/relu). Shared by every backend.
//   relu_forward(x)            a native value
//   relu_forward<Fmt>(unit)    one Storage or one Word of packed lanes of format Fmt
//   relu_forward<Fmt>(vector)  a Vector16
// Floats narrower than 32 bits take the bit form (lanes::relu_forward): no half or float8 type
// differs between CPU, CUDA and SYCL.
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

// The bits of a kBytes-byte element.
template <int kBytes>
using UnsignedOfSize = typename std::conditional<
    kBytes == 1, uint8_t,
    typename std::conditional<kBytes == 2, uint16_t,
                              typename std::conditional<kBytes == 4, uint32_t,
                                                        uint64_t>::type>::type>::type;

enum class LaneKind { kSignedInt, kUnsignedInt, kIeeeFloat };

// A dtype's Storage (bit patterns for floats narrower than 32 bits) and lane rule. kInfBits:
// the largest non-NaN magnitude (+inf, or the largest finite value where there is no inf).
template <typename Storage_, LaneKind kKind_, uint64_t kInfBits_ = 0>
struct Format {
  using Storage = Storage_;
  static constexpr LaneKind kKind = kKind_;
  static constexpr int kLaneBits = 8 * sizeof(Storage_);
  static constexpr uint64_t kInfBits = kInfBits_;
  // No narrow float type is common to CPU, CUDA and SYCL.
  static constexpr bool kNative = !(kKind_ == LaneKind::kIeeeFloat && sizeof(Storage_) < 4);
  static constexpr bool kHasGradient = kKind_ == LaneKind::kIeeeFloat && sizeof(Storage_) >= 2;
  using Word = typename std::conditional<sizeof(Storage_) == 8, uint64_t, uint32_t>::type;
};

using Float32Format = Format<float, LaneKind::kIeeeFloat, 0x7f800000u>;
using Float64Format = Format<double, LaneKind::kIeeeFloat, 0x7ff0000000000000ull>;
using Float16Format = Format<uint16_t, LaneKind::kIeeeFloat, 0x7c00u>;
using BFloat16Format = Format<uint16_t, LaneKind::kIeeeFloat, 0x7f80u>;
// e4m3fn has no inf; the fnuz formats' one NaN, 0x80, is negative: relu is int8's on both.
using Float8E5M2Format = Format<uint8_t, LaneKind::kIeeeFloat, 0x7cu>;
using Float8E4M3FnFormat = Format<uint8_t, LaneKind::kIeeeFloat, 0x7eu>;
using Float8FnuzFormat = Format<uint8_t, LaneKind::kIeeeFloat, 0x7fu>;
using Int8Format = Format<int8_t, LaneKind::kSignedInt>;
using Int16Format = Format<int16_t, LaneKind::kSignedInt>;
using Int32Format = Format<int32_t, LaneKind::kSignedInt>;
using Int64Format = Format<int64_t, LaneKind::kSignedInt>;
using UInt8Format = Format<uint8_t, LaneKind::kUnsignedInt>;
using UInt16Format = Format<uint16_t, LaneKind::kUnsignedInt>;
using UInt32Format = Format<uint32_t, LaneKind::kUnsignedInt>;
using UInt64Format = Format<uint64_t, LaneKind::kUnsignedInt>;

template <typename Word, int kLaneBits>
RELU_HOST_DEVICE constexpr Word broadcast_lane(uint64_t lane) {
  Word word = 0;
  for (int shift = 0; shift < int(8 * sizeof(Word)); shift += kLaneBits) {
    word = Word(word | Word(Word(lane) << shift));
  }
  return word;
}

// Per lane: signs, each sign bit (0 for unsigned lanes); nan_floor, the smallest NaN magnitude
// (`signs` for integers, which turns the NaN test off). Fmt's rule at compile time ...
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

// ... and at run time, for a kernel that serves every format of a lane width.
template <typename Word>
struct LaneRule {
  Word signs;
  Word nan_floor;

  template <typename Fmt>
  static constexpr LaneRule of() {
    return LaneRule{FormatLaneRule<Fmt, Word>::signs, FormatLaneRule<Fmt, Word>::nan_floor};
  }
};

namespace lanes {

// relu of every lane by `rule`, bit operations only: no carry or borrow crosses a lane.
// kNanLanes: the lanes may hold NaNs (true for a rule known only at run time).
template <int kLaneBits, bool kNanLanes, typename Word, typename Rule>
RELU_HOST_DEVICE Word relu_forward(Word word, Rule rule) {
  static_assert(std::is_unsigned<Word>::value, "lanes live in an unsigned word");
  static_assert((8 * sizeof(Word)) % kLaneBits == 0, "a word holds whole lanes");
  Word zeroed_signs = Word(word & rule.signs);
  if constexpr (kNanLanes) {
    // The sign forced on makes a lane >= nan_floor, so the subtraction never borrows across
    // lanes and keeps the sign bit exactly for a NaN.
    const Word nan_signs = Word(Word(Word(word | rule.signs) - rule.nan_floor) & rule.signs);
    zeroed_signs = Word(zeroed_signs | nan_signs);
  }
  // (s << 1) - (s >> (kLaneBits - 1)) fills each lane whose sign bit s is set.
  const Word lane_mask = Word(Word(zeroed_signs << 1) - Word(zeroed_signs >> (kLaneBits - 1)));
  return Word(word & Word(~lane_mask));
}

// Whether relu keeps x (x > 0) by a run-time rule: x - 1, wrapping at 0, is below the largest
// non-NaN magnitude. One compare where the lane form takes six operations.
template <typename Storage>
RELU_HOST_DEVICE bool keeps(Storage x, LaneRule<Storage> rule) {
  static_assert(std::is_unsigned<Storage>::value, "an element's bits");
  return Storage(x - 1) < Storage(rule.nan_floor - 1);
}

// By a run-time rule: a lone lane takes the compare of keeps and a select.
template <int kLaneBits, typename Word>
RELU_HOST_DEVICE Word relu_forward(Word word, LaneRule<Word> rule) {
  if constexpr (kLaneBits == 8 * sizeof(Word)) {
    return keeps(word, rule) ? word : Word(0);
  } else {
    return relu_forward<kLaneBits, true>(word, rule);
  }
}

// By the rule of format Fmt, folded at compile time.
template <typename Fmt, typename Word>
RELU_HOST_DEVICE Word relu_forward(Word word) {
  if constexpr (Fmt::kKind == LaneKind::kUnsignedInt) {
    return word;
  } else {
    return relu_forward<Fmt::kLaneBits, Fmt::kKind == LaneKind::kIeeeFloat>(
        word, FormatLaneRule<Fmt, Word>{});
  }
}

}  // namespace lanes

// One Storage or one Word of Fmt (the two are one type only for 32- and 64-bit unsigned
// formats, where relu is the identity either way).
template <typename Fmt, typename Unit,
          typename = typename std::enable_if<
              std::is_same<Unit, typename Fmt::Storage>::value ||
              std::is_same<Unit, typename Fmt::Word>::value>::type>
RELU_HOST_DEVICE Unit relu_forward(Unit x) {
  using Storage = typename Fmt::Storage;
  if constexpr (std::is_same<Unit, Storage>::value) {
    if constexpr (Fmt::kNative) {
      return relu_forward(x);
    } else {
      return lanes::relu_forward<Fmt>(x);
    }
  } else if constexpr (Fmt::kKind == LaneKind::kIeeeFloat && Fmt::kNative) {
    // float and double: a compare and select per lane beats the bit form on every ISA.
    constexpr int kLanes = int(sizeof(Unit) / sizeof(Storage));
    Storage values[kLanes];
    std::memcpy(values, &x, sizeof(Unit));
    for (int i = 0; i < kLanes; ++i) values[i] = relu_forward(values[i]);
    std::memcpy(&x, values, sizeof(Unit));
    return x;
  } else {
#if defined(__CUDA_ARCH__)
    if constexpr (Fmt::kKind == LaneKind::kSignedInt && Fmt::kLaneBits == 8) {
      return __vmaxs4(x, 0u);  // four signed bytes at once
    }
#endif
    return lanes::relu_forward<Fmt>(x);
  }
}

template <typename Fmt>
RELU_HOST_DEVICE Vector16<typename Fmt::Word> relu_forward(Vector16<typename Fmt::Word> v) {
  for (int i = 0; i < Vector16<typename Fmt::Word>::kWords; ++i) {
    v.words[i] = relu_forward<Fmt>(v.words[i]);
  }
  return v;
}

// grad_out where relu's result is > 0 (exactly where x > 0), else +0: 0 at NaN, 0 and -0.0.
template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage relu_backward(typename Fmt::Storage grad_out,
                                                     typename Fmt::Storage result) {
  using Storage = typename Fmt::Storage;
  return relu_forward<Fmt>(result) != Storage(0) ? grad_out : Storage(0);
}

template <typename Fmt>
RELU_HOST_DEVICE Vector16<typename Fmt::Word> relu_backward(Vector16<typename Fmt::Word> grad_out,
                                                           Vector16<typename Fmt::Word> result) {
  using Storage = typename Fmt::Storage;
  constexpr int kElements = int(kVectorBytes / sizeof(Storage));
  Storage grads[kElements];
  Storage results[kElements];
  std::memcpy(grads, grad_out.words, kVectorBytes);
  std::memcpy(results, result.words, kVectorBytes);
  for (int i = 0; i < kElements; ++i) grads[i] = relu_backward<Fmt>(grads[i], results[i]);
  std::memcpy(grad_out.words, grads, kVectorBytes);
  return grad_out;
}

}  // namespace relu_kernel
