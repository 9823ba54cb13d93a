// OpMath: what the floating ops compute in (float; double for float64), and a Storage's
// conversion to it and back (round to nearest even), as bit operations every backend shares.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "relu-common/relu_element.h"

namespace relu_kernel {

template <typename Fmt>
struct OpMath {
  using Type = float;
};
template <>
struct OpMath<Float64Format> {
  using Type = double;
};

template <typename To, typename From>
RELU_HOST_DEVICE To bit_cast_to(From from) {
  static_assert(sizeof(To) == sizeof(From), "same width");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// Selects as masks on the CPU and SYCL, which GCC vectorizes (a ternary stays a branch);
// the GPU's own select on CUDA.
RELU_HOST_DEVICE uint32_t select_bits(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - uint32_t(c);
  return (a & mask) | (b & ~mask);
}

template <typename T>
RELU_HOST_DEVICE T keep_or_zero(bool keep, T value) {
  using Bits = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
  return bit_cast_to<T>(Bits(bit_cast_to<Bits>(value) & Bits(Bits(0) - Bits(keep))));
}
#if defined(__CUDA_ARCH__)
#define RELU_SELECT(c, a, b) ((c) ? (a) : (b))
#define RELU_KEEP_OR_ZERO(keep, value) ((keep) ? (value) : decltype(value)(0))
#else
#define RELU_SELECT(c, a, b) ::relu_kernel::select_bits((c), (a), (b))
#define RELU_KEEP_OR_ZERO(keep, value) ::relu_kernel::keep_or_zero((keep), (value))
#endif

// IEEE binary16 -> float, exact for every pattern.
RELU_HOST_DEVICE float float_of_half_bits(uint16_t h) {
  const uint32_t magnitude = uint32_t(h & 0x7fffu) << 13;
  const uint32_t exponent = magnitude & 0x0f800000u;
  const uint32_t normal = magnitude + ((127u - 15u) << 23);
  const uint32_t special = normal + ((128u - 16u) << 23);  // inf and NaN keep an all-ones exponent
  // Zero and subnormals: the mantissa placed under 2^-14, minus that 2^-14, is exact in float.
  const float tiny = bit_cast_to<float>(normal + (1u << 23)) - bit_cast_to<float>(113u << 23);
  const uint32_t bits = RELU_SELECT(exponent == 0x0f800000u, special,
                                    RELU_SELECT(exponent == 0, bit_cast_to<uint32_t>(tiny), normal));
  return bit_cast_to<float>(bits | (uint32_t(h & 0x8000u) << 16));
}

// float -> IEEE binary16, round to nearest even; overflow to inf, NaN to a quiet NaN.
RELU_HOST_DEVICE uint16_t half_bits_of_float(float f) {
  const uint32_t bits = bit_cast_to<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  // Below 2^-14 the result is subnormal: adding 0.5 aligns the mantissa so that the float add
  // itself rounds to the half's last place.
  const float aligned = bit_cast_to<float>(magnitude) + 0.5f;
  const uint32_t subnormal = bit_cast_to<uint32_t>(aligned) - 0x3f000000u;
  const uint32_t rebased = magnitude - ((127u - 15u) << 23);
  const uint32_t normal = (rebased + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  const uint32_t finite = RELU_SELECT(magnitude < (113u << 23), subnormal, normal);
  const uint32_t result = RELU_SELECT(magnitude > 0x7f800000u, 0x7e00u,
                                      RELU_SELECT(magnitude >= (143u << 23), 0x7c00u, finite));
  return uint16_t(result | sign);
}

RELU_HOST_DEVICE float float_of_bfloat16_bits(uint16_t b) {
  return bit_cast_to<float>(uint32_t(b) << 16);
}

// float -> bfloat16, round to nearest even; NaN to a quiet NaN.
RELU_HOST_DEVICE uint16_t bfloat16_bits_of_float(float f) {
  const uint32_t bits = bit_cast_to<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return uint16_t(RELU_SELECT((bits & 0x7fffffffu) > 0x7f800000u, uint16_t((bits >> 16) | 0x40u),
                              uint16_t(rounded)));
}

template <typename Fmt>
constexpr bool kIsHalf = std::is_same<Fmt, Float16Format>::value;
template <typename Fmt>
constexpr bool kIsBFloat16 = std::is_same<Fmt, BFloat16Format>::value;

template <typename Fmt>
RELU_HOST_DEVICE typename OpMath<Fmt>::Type to_opmath(typename Fmt::Storage x) {
  if constexpr (kIsHalf<Fmt>) return float_of_half_bits(x);
  else if constexpr (kIsBFloat16<Fmt>) return float_of_bfloat16_bits(x);
  else return x;
}

template <typename Fmt>
RELU_HOST_DEVICE typename Fmt::Storage from_opmath(typename OpMath<Fmt>::Type v) {
  if constexpr (kIsHalf<Fmt>) return half_bits_of_float(v);
  else if constexpr (kIsBFloat16<Fmt>) return bfloat16_bits_of_float(v);
  else return v;
}

}  // namespace relu_kernel
