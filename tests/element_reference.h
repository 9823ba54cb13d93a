// The tests' own ReLU of one element, written from the definition and sharing nothing with
// relu-common/relu_element.h: decode the value, out = x > 0 ? x : +0. float16 and the
// float8 formats are decoded field by field, bfloat16/float32/float64 through the host's float types, integers by
// their sign bit. Also the random and special lanes the checkers feed the kernels.
// relu_squared's and the gated ops' references below likewise.
// Used by tests/relu_element_check.cpp and tests/xpu_items_check.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "relu-common/relu_element.h"

namespace relu_check {

using namespace relu_kernel;

// --mutant: the reference keeps NaN (torch's CPU relu), so that a run must fail.
inline bool g_mutant = false;

inline uint64_t g_rng_state = 0;

inline uint64_t next_random() {  // splitmix64
  uint64_t z = (g_rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------- the reference
enum class RefKind {
  kFloat16, kBFloat16, kFloat32, kFloat64,
  kFloat8E4M3Fn, kFloat8E5M2, kFloat8E4M3Fnuz, kFloat8E5M2Fnuz,
  kSigned, kUnsigned,
};

struct RefFormat {
  RefKind kind;
  int bits;
  const char* name;
};

template <typename Fmt> RefFormat ref_format();
template <> inline RefFormat ref_format<Float16Format>() { return {RefKind::kFloat16, 16, "float16"}; }
template <> inline RefFormat ref_format<BFloat16Format>() { return {RefKind::kBFloat16, 16, "bfloat16"}; }
template <> inline RefFormat ref_format<Float32Format>() { return {RefKind::kFloat32, 32, "float32"}; }
template <> inline RefFormat ref_format<Float64Format>() { return {RefKind::kFloat64, 64, "float64"}; }
template <> inline RefFormat ref_format<Int8Format>() { return {RefKind::kSigned, 8, "int8"}; }
template <> inline RefFormat ref_format<Int16Format>() { return {RefKind::kSigned, 16, "int16"}; }
template <> inline RefFormat ref_format<Int32Format>() { return {RefKind::kSigned, 32, "int32"}; }
template <> inline RefFormat ref_format<Int64Format>() { return {RefKind::kSigned, 64, "int64"}; }
template <> inline RefFormat ref_format<UInt8Format>() { return {RefKind::kUnsigned, 8, "uint8"}; }
template <> inline RefFormat ref_format<UInt16Format>() { return {RefKind::kUnsigned, 16, "uint16"}; }
template <> inline RefFormat ref_format<UInt32Format>() { return {RefKind::kUnsigned, 32, "uint32"}; }
template <> inline RefFormat ref_format<UInt64Format>() { return {RefKind::kUnsigned, 64, "uint64"}; }
template <> inline RefFormat ref_format<Float8E4M3FnFormat>() { return {RefKind::kFloat8E4M3Fn, 8, "float8_e4m3fn"}; }
template <> inline RefFormat ref_format<Float8E5M2Format>() { return {RefKind::kFloat8E5M2, 8, "float8_e5m2"}; }
// One format serves float8_e4m3fnuz and float8_e5m2fnuz (relu_element.h); the checker
// compares the two formats' decodings to show that relu cannot tell them apart.
template <> inline RefFormat ref_format<Float8FnuzFormat>() { return {RefKind::kFloat8E4M3Fnuz, 8, "float8_fnuz"}; }

inline uint64_t lane_mask(int bits) { return bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits, decoded by hand.
inline double decode_float16(uint64_t bits) {
  const int sign = int((bits >> 15) & 1);
  const int exponent = int((bits >> 10) & 0x1f);
  const int mantissa = int(bits & 0x3ff);
  double magnitude;
  if (exponent == 0x1f) {
    magnitude = mantissa != 0 ? std::nan("") : INFINITY;
  } else if (exponent == 0) {
    magnitude = std::ldexp(double(mantissa), -24);  // subnormal
  } else {
    magnitude = std::ldexp(double(mantissa + 1024), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

// float8: 1 sign, 4 or 5 exponent, 3 or 2 mantissa bits, decoded by hand from the format
// definitions (OCP FP8 for e4m3fn/e5m2; the "fnuz" variants have bias + 1, no inf, no -0,
// and one NaN, 0x80).
inline double decode_float8(RefKind kind, uint64_t bits) {
  const bool e5m2 = kind == RefKind::kFloat8E5M2 || kind == RefKind::kFloat8E5M2Fnuz;
  const bool fnuz = kind == RefKind::kFloat8E4M3Fnuz || kind == RefKind::kFloat8E5M2Fnuz;
  const int mantissa_bits = e5m2 ? 2 : 3;
  const int exponent_bits = 7 - mantissa_bits;
  const int bias = (1 << (exponent_bits - 1)) - 1 + (fnuz ? 1 : 0);
  const int sign = int((bits >> 7) & 1);
  const int exponent = int((bits >> mantissa_bits) & ((1 << exponent_bits) - 1));
  const int mantissa = int(bits & ((1 << mantissa_bits) - 1));
  if (fnuz && (bits & 0xff) == 0x80) return std::nan("");
  if (!fnuz && e5m2 && exponent == 0x1f) {  // IEEE-like: all-ones exponent
    if (mantissa != 0) return std::nan("");
    return sign ? -INFINITY : INFINITY;
  }
  if (!fnuz && !e5m2 && exponent == 0xf && mantissa == 0x7) return std::nan("");  // S.1111.111
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(double(mantissa), 1 - bias - mantissa_bits);  // subnormal
  } else {
    magnitude = std::ldexp(double(mantissa + (1 << mantissa_bits)), exponent - bias - mantissa_bits);
  }
  return sign ? -magnitude : magnitude;
}

inline bool is_float8(RefKind kind) {
  return kind == RefKind::kFloat8E4M3Fn || kind == RefKind::kFloat8E5M2 ||
         kind == RefKind::kFloat8E4M3Fnuz || kind == RefKind::kFloat8E5M2Fnuz;
}

// Whether the element with these bits is > 0. NaN compares false.
inline bool ref_positive(RefFormat f, uint64_t bits) {
  switch (f.kind) {
    case RefKind::kFloat16:
      return decode_float16(bits) > 0.0;
    case RefKind::kFloat8E4M3Fn: case RefKind::kFloat8E5M2:
    case RefKind::kFloat8E4M3Fnuz: case RefKind::kFloat8E5M2Fnuz:
      return decode_float8(f.kind, bits) > 0.0;
    case RefKind::kBFloat16: {  // bfloat16 is the top half of a float32
      const uint32_t widened = uint32_t(bits) << 16;
      float value;
      std::memcpy(&value, &widened, 4);
      return value > 0.0f;
    }
    case RefKind::kFloat32: {
      const uint32_t narrow = uint32_t(bits);
      float value;
      std::memcpy(&value, &narrow, 4);
      return value > 0.0f;
    }
    case RefKind::kFloat64: {
      double value;
      std::memcpy(&value, &bits, 8);
      return value > 0.0;
    }
    case RefKind::kSigned: {
      const uint64_t sign_bit = uint64_t(1) << (f.bits - 1);
      return (bits & sign_bit) == 0 && bits != 0;
    }
    case RefKind::kUnsigned:
      return bits != 0;
  }
  return false;
}

inline bool ref_is_nan(RefFormat f, uint64_t bits) {
  if (is_float8(f.kind)) return std::isnan(decode_float8(f.kind, bits));
  switch (f.kind) {
    case RefKind::kFloat16: return std::isnan(decode_float16(bits));
    case RefKind::kBFloat16: return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0;
    case RefKind::kFloat32: return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0;
    case RefKind::kFloat64: {
      double value;
      std::memcpy(&value, &bits, 8);
      return std::isnan(value);
    }
    default: return false;
  }
}

// Bits of relu(x): x where x > 0, else +0 (all bits clear).
inline uint64_t ref_relu(RefFormat f, uint64_t bits) {
  if (g_mutant && ref_is_nan(f, bits)) return bits;  // deliberately wrong: NaN -> NaN
  return ref_positive(f, bits) ? bits : 0;
}

inline uint64_t ref_relu_backward(RefFormat f, uint64_t grad, uint64_t result) {
  if (g_mutant && ref_is_nan(f, result)) return grad;
  return ref_positive(f, result) ? grad : 0;
}

// ---------------------------------------------------------------- relu_squared's reference
// From the definition, sharing nothing with relu-common/relu_squared_element.h: decode to
// double, compute as float32 does (float64 for float64), round once more to the format by
// nearbyint on the format's grid, encode field by field.

// The value of a float16/bfloat16/float32/float64 element.
inline double ref_decode(RefFormat f, uint64_t bits) {
  switch (f.kind) {
    case RefKind::kFloat16: return decode_float16(bits);
    case RefKind::kBFloat16: {
      const uint32_t widened = uint32_t(bits) << 16;
      float value;
      std::memcpy(&value, &widened, 4);
      return value;
    }
    case RefKind::kFloat32: {
      const uint32_t narrow = uint32_t(bits);
      float value;
      std::memcpy(&value, &narrow, 4);
      return value;
    }
    default: {
      double value;
      std::memcpy(&value, &bits, 8);
      return value;
    }
  }
}

// v rounded to nearest even on a binary format of `exponent_bits` and `mantissa_bits` (no
// FTZ, overflow to inf) and encoded; v is not NaN.
inline uint64_t ref_encode_binary(double v, int exponent_bits, int mantissa_bits) {
  const int total = 1 + exponent_bits + mantissa_bits;
  const uint64_t sign = std::signbit(v) ? uint64_t(1) << (total - 1) : 0;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const uint64_t inf = ((uint64_t(1) << exponent_bits) - 1) << mantissa_bits;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | inf;
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, 0.5 <= m < 1
  const int exponent = std::max(e - 1, 1 - bias);  // subnormals share the smallest exponent
  const double quantum = std::ldexp(1.0, exponent - mantissa_bits);
  const double rounded = std::nearbyint(a / quantum) * quantum;  // default mode: to nearest even
  if (rounded >= std::ldexp(1.0, bias + 1)) return sign | inf;
  if (rounded < std::ldexp(1.0, 1 - bias)) {
    return sign | uint64_t(rounded / std::ldexp(1.0, 1 - bias - mantissa_bits));
  }
  int re = 0;
  std::frexp(rounded, &re);
  const uint64_t field = uint64_t(re - 1 + bias);
  const uint64_t mantissa =
      uint64_t(rounded / std::ldexp(1.0, re - 1 - mantissa_bits)) - (uint64_t(1) << mantissa_bits);
  return sign | (field << mantissa_bits) | mantissa;
}

// A result of the OpMath computation (a float, or a double for float64) as bits of format f.
inline uint64_t ref_round(RefFormat f, double v) {
  switch (f.kind) {
    case RefKind::kFloat16: return ref_encode_binary(v, 5, 10);
    case RefKind::kBFloat16: return ref_encode_binary(v, 8, 7);
    case RefKind::kFloat32: return ref_encode_binary(v, 8, 23);
    default: return ref_encode_binary(v, 11, 52);
  }
}

inline bool ref_is_opmath_double(RefFormat f) { return f.kind == RefKind::kFloat64; }

// One multiplication in OpMath: double for float64, else float (the exact double product of
// two floats, rounded once to float by the host's conversion).
inline double ref_opmath_mul(RefFormat f, double a, double b) {
  if (ref_is_opmath_double(f)) return a * b;
  return double(float(double(float(a)) * double(float(b))));
}

// The canonical quiet NaN the reference reports; the checkers accept any NaN for it (the
// payload of a NaN made by arithmetic is the host's).
inline uint64_t ref_nan(RefFormat f) {
  switch (f.kind) {
    case RefKind::kFloat16: return 0x7e00;
    case RefKind::kBFloat16: return 0x7fc0;
    case RefKind::kFloat32: return 0x7fc00000u;
    default: return 0x7ff8000000000000ull;
  }
}

// Bits of relu_squared(x): x > 0 ? x * x : +0.
inline uint64_t ref_relu_squared(RefFormat f, uint64_t bits) {
  const double x = ref_decode(f, bits);
  if (g_mutant && std::isnan(x)) return ref_nan(f);  // deliberately wrong: NaN -> NaN
  if (!(x > 0.0)) return 0;
  return ref_round(f, ref_opmath_mul(f, x, x));
}

// Bits of its gradient: x > 0 ? (2 * x) * grad : +0, whatever grad is where x <= 0.
inline uint64_t ref_relu_squared_backward(RefFormat f, uint64_t grad, uint64_t bits) {
  const double x = ref_decode(f, bits);
  if (g_mutant && std::isnan(x)) return grad;
  if (!(x > 0.0)) return 0;
  const double product = ref_opmath_mul(f, ref_opmath_mul(f, 2.0, x), ref_decode(f, grad));
  return std::isnan(product) ? ref_nan(f) : ref_round(f, product);
}

// ---------------------------------------------------------------- the gated ops' reference
// relu_and_mul and relu_squared_and_mul from their definition, sharing nothing with
// relu-common/gated_element.h: a and b (x's halves) decoded to double, each product in OpMath
// in the order the definition gives ((a * a) * b, ((2 * a) * b) * grad), rounded once to the
// format. squared: the gate a > 0 ? a * a : +0; else a > threshold ? a : +0, the threshold
// taken in OpMath.

inline double ref_opmath_threshold(RefFormat f, double threshold) {
  return ref_is_opmath_double(f) ? threshold : double(float(threshold));
}

// Whether a passes the gate. --mutant: NaN passes (torch's CPU relu keeps NaN): a run must fail.
inline bool ref_gate_open(RefFormat f, bool squared, double a, double threshold) {
  if (g_mutant && std::isnan(a)) return true;
  return squared ? a > 0.0 : a > ref_opmath_threshold(f, threshold);
}

inline double ref_gate(RefFormat f, bool squared, double a, double threshold) {
  if (!ref_gate_open(f, squared, a, threshold)) return 0.0;
  return squared ? ref_opmath_mul(f, a, a) : a;
}

inline uint64_t ref_rounded(RefFormat f, double v) {
  return std::isnan(v) ? ref_nan(f) : ref_round(f, v);
}

// out = gate(a) * b: a closed gate gives +0 * b (NaN where b is inf or NaN).
inline uint64_t ref_gated(RefFormat f, bool squared, uint64_t a, uint64_t b, double threshold) {
  const double gate = ref_gate(f, squared, ref_decode(f, a), threshold);
  return ref_rounded(f, ref_opmath_mul(f, gate, ref_decode(f, b)));
}

// grad_a: a select, +0 where the gate is closed whatever grad and b are.
inline uint64_t ref_gated_grad_a(RefFormat f, bool squared, uint64_t grad, uint64_t a, uint64_t b,
                                 double threshold) {
  const double av = ref_decode(f, a), bv = ref_decode(f, b), g = ref_decode(f, grad);
  if (!ref_gate_open(f, squared, av, threshold)) return 0;
  if (!squared) return ref_rounded(f, ref_opmath_mul(f, g, bv));
  return ref_rounded(f, ref_opmath_mul(f, ref_opmath_mul(f, ref_opmath_mul(f, 2.0, av), bv), g));
}

// grad_b = grad * gate(a).
inline uint64_t ref_gated_grad_b(RefFormat f, bool squared, uint64_t grad, uint64_t a,
                                 double threshold) {
  const double gate = ref_gate(f, squared, ref_decode(f, a), threshold);
  return ref_rounded(f, ref_opmath_mul(f, ref_decode(f, grad), gate));
}

// Whether `got` is what the reference computed: equal bits, or both NaN.
inline bool ref_same(RefFormat f, uint64_t got, uint64_t expected) {
  return got == expected || (ref_is_nan(f, got) && ref_is_nan(f, expected));
}

// ---------------------------------------------------------------- inputs
// Lanes a kernel gets wrong first: signs, zeros, infinities, NaNs, denormals, extremes.
template <typename Fmt>
uint64_t special_lane(uint64_t pick) {
  const int bits = Fmt::kLaneBits;
  const uint64_t mask = lane_mask(bits);
  const uint64_t sign = uint64_t(1) << (bits - 1);
  if (Fmt::kKind == LaneKind::kIeeeFloat) {
    const uint64_t inf = Fmt::kInfBits;
    const uint64_t table[] = {0,           sign,           inf,         sign | inf,
                              inf + 1,     sign | (inf + 1), inf | (inf >> 1), mask,
                              sign - 1,    1,              sign | 1,    inf - 1,
                              sign | (inf - 1), (inf >> 1) | 1, sign | (inf >> 1)};
    return table[pick % (sizeof(table) / sizeof(table[0]))] & mask;
  }
  const uint64_t table[] = {0, 1, mask, sign, sign - 1, sign + 1, mask - 1, 2};
  return table[pick % (sizeof(table) / sizeof(table[0]))] & mask;
}

template <typename Fmt>
uint64_t random_lane() {
  const uint64_t r = next_random();
  if (r % 4 == 0) return special_lane<Fmt>(r >> 8);
  return next_random() & lane_mask(Fmt::kLaneBits);
}

template <typename Fmt, typename Word>
Word random_word() {
  Word word = 0;
  for (int shift = 0; shift < int(8 * sizeof(Word)); shift += Fmt::kLaneBits) {
    word = Word(word | Word(random_lane<Fmt>() << shift));
  }
  return word;
}


}  // namespace relu_check
