// Checks relu-common/relu_element.h, the element logic every backend runs, against the
// tests' own reference (tests/element_reference.h: decode the value, out = x > 0 ? x : +0),
// which reuses none of the header's bit tricks.
//
//   relu_element_check <seed> [--mutant]
//
// Exhaustive where the domain is small: every float16, bfloat16, int16 and uint16 bit
// pattern, every int8/uint8 value and every float8 pattern (e4m3fn, e5m2, and the format
// the two fnuz dtypes share), for relu_forward, relu_backward and lanes::relu_forward (each
// pattern in each lane position of 16-, 32- and 64-bit words; the format's LaneRule known at
// compile time, and read at run time as the CUDA kernels shared by several formats take it).
// Everything else on random words mixing uniform bits with special values (+-0, +-inf, NaNs,
// denormals, extremes).
// relu_squared_element.h likewise: every float16 and bfloat16 pattern forward and backward
// (against random, special and overflowing grads), random and special float32/float64, and its
// 16-bit conversions (every pattern widened and back, every rounding tie and its neighbours).
// gated_element.h (relu_and_mul, relu_squared_and_mul) forward and both gradients: every float16
// and bfloat16 pattern of a against random, special and overflowing b and grad, a at and beside
// each threshold (0, 0.5, -1), random and special float32/float64.
// --mutant checks against a reference that keeps NaN (torch's CPU relu; relu_squared: NaN
// squared): the run must fail, which shows that a wrong kernel would be caught. Exit status: 0
// when everything matches.
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "relu-common/gated_element.h"
#include "relu-common/relu_element.h"
#include "relu-common/relu_squared_element.h"
#include "tests/element_reference.h"

namespace {

using namespace relu_check;

long long g_checks = 0;
long long g_failures = 0;

// ---------------------------------------------------------------- comparison
void report(const char* what, RefFormat f, const char* word_name, uint64_t input, uint64_t extra,
            uint64_t got, uint64_t expected) {
  ++g_failures;
  if (g_failures <= 10) {
    std::printf("FAIL %s<%s>%s input=0x%" PRIx64 " other=0x%" PRIx64 " got=0x%" PRIx64
                " expected=0x%" PRIx64 "\n",
                what, f.name, word_name, input, extra, got, expected);
  }
}

template <typename Word>
const char* word_name() {
  return sizeof(Word) == 2 ? "(uint16)" : sizeof(Word) == 4 ? "(uint32)" : "(uint64)";
}

template <int kBytes>
struct UnsignedOfSizeT;
template <> struct UnsignedOfSizeT<1> { using Type = uint8_t; };
template <> struct UnsignedOfSizeT<2> { using Type = uint16_t; };
template <> struct UnsignedOfSizeT<4> { using Type = uint32_t; };
template <> struct UnsignedOfSizeT<8> { using Type = uint64_t; };
template <int kBytes>
using UnsignedOfSize = typename UnsignedOfSizeT<kBytes>::Type;

// The rule of Fmt as a kernel shared by several formats receives it: a value read at run
// time (volatile: the compiler cannot fold it back into constants).
template <typename Fmt, typename Word>
LaneRule<Word> runtime_rule() {
  static volatile Word signs = LaneRule<Word>::template of<Fmt>().signs;
  static volatile Word nan_floor = LaneRule<Word>::template of<Fmt>().nan_floor;
  return LaneRule<Word>{signs, nan_floor};
}

void check_lanes_result(const char* what, RefFormat f, const char* name, uint64_t word,
                        uint64_t got, int word_bits) {
  for (int shift = 0; shift < word_bits; shift += f.bits) {
    const uint64_t lane = (word >> shift) & lane_mask(f.bits);
    const uint64_t got_lane = (got >> shift) & lane_mask(f.bits);
    ++g_checks;
    if (got_lane != ref_relu(f, lane)) {
      report(what, f, name, word, uint64_t(shift), got, ref_relu(f, lane) << shift);
    }
  }
}

// One word through lanes::relu_forward, lane by lane against the reference: with Fmt's rule at compile
// time, and with it at run time through the form every format shares (NaN test included,
// which an integer rule must turn into nothing).
template <typename Fmt, typename Word>
void check_lanes_word(Word word) {
  const RefFormat f = ref_format<Fmt>();
  constexpr int kWordBits = int(8 * sizeof(Word));
  check_lanes_result("lanes::relu_forward", f, word_name<Word>(), uint64_t(word),
                     uint64_t(lanes::relu_forward<Fmt>(word)), kWordBits);
  check_lanes_result("lanes::relu_forward(runtime rule)", f, word_name<Word>(), uint64_t(word),
                     uint64_t(lanes::relu_forward<Fmt::kLaneBits, true>(word, runtime_rule<Fmt, Word>())),
                     kWordBits);
  check_lanes_result("lanes::relu_forward", f, word_name<Word>(), uint64_t(word),
                     uint64_t(lanes::relu_forward<Fmt::kLaneBits>(word, runtime_rule<Fmt, Word>())),
                     kWordBits);
}

template <typename Fmt, typename Word>
void check_lanes(int random_words) {
  constexpr int kBits = Fmt::kLaneBits;
  if constexpr (kBits <= 16) {
    // Every pattern in every lane position, the other lanes random.
    for (uint64_t pattern = 0; pattern <= lane_mask(kBits); ++pattern) {
      for (int shift = 0; shift < int(8 * sizeof(Word)); shift += kBits) {
        Word word = random_word<Fmt, Word>();
        word = Word(word & Word(~Word(lane_mask(kBits) << shift)));
        word = Word(word | Word(pattern << shift));
        check_lanes_word<Fmt, Word>(word);
      }
    }
  }
  for (int i = 0; i < random_words; ++i) check_lanes_word<Fmt, Word>(random_word<Fmt, Word>());
}

template <typename Fmt>
typename Fmt::Storage storage_from_bits(uint64_t bits) {
  typename Fmt::Storage value;
  std::memcpy(&value, &bits, sizeof(value));  // little-endian: the low bytes
  return value;
}

template <typename Fmt>
uint64_t bits_of(typename Fmt::Storage value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(value));
  return bits;
}

template <typename Fmt>
void check_element(uint64_t x, uint64_t grad) {
  const RefFormat f = ref_format<Fmt>();
  const uint64_t got = bits_of<Fmt>(relu_forward<Fmt>(storage_from_bits<Fmt>(x)));
  ++g_checks;
  if (got != ref_relu(f, x)) report("relu_forward", f, "", x, 0, got, ref_relu(f, x));
  const uint64_t got_grad = bits_of<Fmt>(
      relu_backward<Fmt>(storage_from_bits<Fmt>(grad), storage_from_bits<Fmt>(x)));
  ++g_checks;
  if (got_grad != ref_relu_backward(f, grad, x)) {
    report("relu_backward", f, "", x, grad, got_grad, ref_relu_backward(f, grad, x));
  }
  // lanes::keeps, the one-element test of the kernels that take the rule at run time.
  using Bits = UnsignedOfSize<Fmt::kLaneBits / 8>;
  const bool kept = lanes::keeps(Bits(x), runtime_rule<Fmt, Bits>());
  ++g_checks;
  if (kept != (ref_relu(f, x) != 0)) report("lanes::keeps", f, "", x, 0, kept, ref_relu(f, x) != 0);
}

template <typename Fmt>
void check_elements(int random_values) {
  constexpr int kBits = Fmt::kLaneBits;
  if constexpr (kBits <= 16) {
    for (uint64_t x = 0; x <= lane_mask(kBits); ++x) check_element<Fmt>(x, random_lane<Fmt>());
  }
  for (int i = 0; i < 64; ++i) check_element<Fmt>(special_lane<Fmt>(uint64_t(i)), random_lane<Fmt>());
  for (int i = 0; i < random_values; ++i) check_element<Fmt>(random_lane<Fmt>(), random_lane<Fmt>());
}

template <typename Fmt>
void check_word(typename Fmt::Word word) {
  using Word = typename Fmt::Word;
  const RefFormat f = ref_format<Fmt>();
  const Word got = relu_forward<Fmt>(word);
  for (int shift = 0; shift < int(8 * sizeof(Word)); shift += Fmt::kLaneBits) {
    const uint64_t lane = (uint64_t(word) >> shift) & lane_mask(f.bits);
    const uint64_t got_lane = (uint64_t(got) >> shift) & lane_mask(f.bits);
    ++g_checks;
    if (got_lane != ref_relu(f, lane)) {
      report("relu_forward", f, word_name<Word>(), uint64_t(word), uint64_t(shift), uint64_t(got),
             ref_relu(f, lane) << shift);
    }
  }
}

template <typename Fmt>
using VectorOf = Vector16<typename Fmt::Word>;

template <typename Fmt>
VectorOf<Fmt> random_vector16() {
  VectorOf<Fmt> v;
  for (int i = 0; i < VectorOf<Fmt>::kWords; ++i) {
    v.words[i] = random_word<Fmt, typename Fmt::Word>();
  }
  return v;
}

template <typename Fmt>
constexpr int kElementsPerVector = int(kVectorBytes / sizeof(typename Fmt::Storage));

template <typename Fmt>
uint64_t element_of(const VectorOf<Fmt>& v, int i) {
  constexpr int kSize = Fmt::kLaneBits / 8;
  uint64_t bits = 0;
  std::memcpy(&bits, reinterpret_cast<const unsigned char*>(v.words) + i * kSize, kSize);
  return bits;
}

template <typename Fmt>
void check_vector16(const VectorOf<Fmt>& x, const VectorOf<Fmt>& grad) {
  const RefFormat f = ref_format<Fmt>();
  const VectorOf<Fmt> out = relu_forward<Fmt>(x);
  const VectorOf<Fmt> grad_in = relu_backward<Fmt>(grad, x);
  for (int i = 0; i < kElementsPerVector<Fmt>; ++i) {
    const uint64_t xi = element_of<Fmt>(x, i);
    const uint64_t gi = element_of<Fmt>(grad, i);
    g_checks += 2;
    if (element_of<Fmt>(out, i) != ref_relu(f, xi)) {
      report("relu_forward", f, "", xi, uint64_t(i), element_of<Fmt>(out, i), ref_relu(f, xi));
    }
    if (element_of<Fmt>(grad_in, i) != ref_relu_backward(f, gi, xi)) {
      report("relu_backward", f, "", xi, gi, element_of<Fmt>(grad_in, i),
             ref_relu_backward(f, gi, xi));
    }
  }
}

template <typename Fmt>
void check_words(int random_words) {
  using Word = typename Fmt::Word;
  for (int i = 0; i < random_words; ++i) check_word<Fmt>(random_word<Fmt, Word>());
  // Vectors with each exhaustively-enumerable pattern in each element position.
  constexpr int kBits = Fmt::kLaneBits;
  if constexpr (kBits <= 16) {
    for (uint64_t pattern = 0; pattern <= lane_mask(kBits); ++pattern) {
      VectorOf<Fmt> x = random_vector16<Fmt>();
      const int position = int(next_random() % kElementsPerVector<Fmt>);
      std::memcpy(reinterpret_cast<unsigned char*>(x.words) + position * (kBits / 8), &pattern,
                  kBits / 8);
      check_vector16<Fmt>(x, random_vector16<Fmt>());
    }
  }
  for (int i = 0; i < random_words / 4; ++i) {
    check_vector16<Fmt>(random_vector16<Fmt>(), random_vector16<Fmt>());
  }
}

template <typename Fmt>
void check_format(int random_count) {
  const long long failures_before = g_failures;
  const long long checks_before = g_checks;
  check_elements<Fmt>(random_count);
  if constexpr (Fmt::kLaneBits <= 16) check_lanes<Fmt, uint16_t>(random_count);
  if constexpr (Fmt::kLaneBits <= 32) check_lanes<Fmt, uint32_t>(random_count);
  check_lanes<Fmt, uint64_t>(random_count);
  check_words<Fmt>(random_count);
  std::printf("%-13s %10lld checks, %lld failures\n", ref_format<Fmt>().name,
              g_checks - checks_before, g_failures - failures_before);
}

// The float8 decoder of the reference, against values from the format definitions, and
// the claim that lets float8_e4m3fnuz and float8_e5m2fnuz share one format: on every bit
// pattern their decodings agree on x > 0.
void check_float8_reference() {
  struct Known {
    RefKind kind;
    uint64_t bits;
    double value;
  };
  const Known known[] = {
      {RefKind::kFloat8E4M3Fn, 0x7e, 448.0},        {RefKind::kFloat8E4M3Fn, 0x01, 0x1p-9},
      {RefKind::kFloat8E4M3Fn, 0x38, 1.0},          {RefKind::kFloat8E4M3Fn, 0xb8, -1.0},
      {RefKind::kFloat8E5M2, 0x7b, 57344.0},        {RefKind::kFloat8E5M2, 0x7c, INFINITY},
      {RefKind::kFloat8E5M2, 0xfc, -INFINITY},      {RefKind::kFloat8E5M2, 0x01, 0x1p-16},
      {RefKind::kFloat8E5M2, 0x3c, 1.0},            {RefKind::kFloat8E4M3Fnuz, 0x7f, 240.0},
      {RefKind::kFloat8E4M3Fnuz, 0x01, 0x1p-10},    {RefKind::kFloat8E4M3Fnuz, 0x40, 1.0},
      {RefKind::kFloat8E5M2Fnuz, 0x7f, 57344.0},    {RefKind::kFloat8E5M2Fnuz, 0x01, 0x1p-17},
      {RefKind::kFloat8E5M2Fnuz, 0x40, 1.0},        {RefKind::kFloat8E5M2Fnuz, 0xc0, -1.0},
  };
  for (const Known& k : known) {
    ++g_checks;
    if (decode_float8(k.kind, k.bits) != k.value) {
      ++g_failures;
      std::printf("FAIL decode_float8 kind=%d bits=0x%" PRIx64 " got=%g expected=%g\n",
                  int(k.kind), k.bits, decode_float8(k.kind, k.bits), k.value);
    }
  }
  for (uint64_t bits = 0; bits < 256; ++bits) {
    const bool e4m3fn_nan = (bits & 0x7f) == 0x7f;
    const bool e5m2_nan = (bits & 0x7f) > 0x7c;
    const bool fnuz_nan = bits == 0x80;
    g_checks += 4;
    if (std::isnan(decode_float8(RefKind::kFloat8E4M3Fn, bits)) != e4m3fn_nan ||
        std::isnan(decode_float8(RefKind::kFloat8E5M2, bits)) != e5m2_nan ||
        std::isnan(decode_float8(RefKind::kFloat8E4M3Fnuz, bits)) != fnuz_nan ||
        (decode_float8(RefKind::kFloat8E4M3Fnuz, bits) > 0.0) !=
            (decode_float8(RefKind::kFloat8E5M2Fnuz, bits) > 0.0)) {
      ++g_failures;
      std::printf("FAIL float8 reference at bits=0x%" PRIx64 "\n", bits);
    }
  }
}

// ---------------------------------------------------------------- relu_squared
// relu_squared_element.h against the reference's relu_squared (decode to double, OpMath
// products, an independent round-to-nearest-even encoder): NaN results compare as NaN.

template <typename Fmt>
void check_squared_element(uint64_t x, uint64_t grad) {
  const RefFormat f = ref_format<Fmt>();
  const uint64_t got = bits_of<Fmt>(relu_squared_forward<Fmt>(storage_from_bits<Fmt>(x)));
  ++g_checks;
  if (!ref_same(f, got, ref_relu_squared(f, x))) {
    report("relu_squared_forward", f, "", x, 0, got, ref_relu_squared(f, x));
  }
  const uint64_t got_grad = bits_of<Fmt>(
      relu_squared_backward<Fmt>(storage_from_bits<Fmt>(grad), storage_from_bits<Fmt>(x)));
  ++g_checks;
  if (!ref_same(f, got_grad, ref_relu_squared_backward(f, grad, x))) {
    report("relu_squared_backward", f, "", x, grad, got_grad,
                   ref_relu_squared_backward(f, grad, x));
  }
}

// Values whose square or gradient leaves the format: the largest finite, around sqrt of it
// (float16: 255.9 and up overflow when squared), and the smallest normals and subnormals.
template <typename Fmt>
uint64_t edge_lane(uint64_t pick) {
  const RefFormat f = ref_format<Fmt>();
  const uint64_t inf = Fmt::kInfBits;
  int mantissa_bits = 0;
  while (((inf >> mantissa_bits) & 1) == 0) ++mantissa_bits;
  const uint64_t smallest_normal = uint64_t(1) << mantissa_bits;
  const uint64_t sqrt_max = ref_round(f, std::sqrt(ref_decode(f, inf - 1)));
  const uint64_t table[] = {inf - 1,         sqrt_max - 1,        sqrt_max, sqrt_max + 1,
                            sqrt_max + 2,    smallest_normal,     smallest_normal - 1,
                            1,               2,                   3};
  const uint64_t lane = table[pick % (sizeof(table) / sizeof(table[0]))];
  const uint64_t sign = uint64_t(1) << (Fmt::kLaneBits - 1);
  return (pick / 16) % 2 ? lane | sign : lane;
}

template <typename Fmt>
void check_squared(int random_values) {
  const long long failures_before = g_failures;
  const long long checks_before = g_checks;
  constexpr int kBits = Fmt::kLaneBits;
  if constexpr (kBits <= 16) {
    // Every pattern forward, and backward against grads of every kind: random, special, edge.
    for (uint64_t x = 0; x <= lane_mask(kBits); ++x) {
      for (int k = 0; k < 6; ++k) check_squared_element<Fmt>(x, random_lane<Fmt>());
      check_squared_element<Fmt>(x, special_lane<Fmt>(next_random()));
      check_squared_element<Fmt>(x, edge_lane<Fmt>(next_random()));
    }
  }
  for (uint64_t i = 0; i < 64; ++i) {
    for (uint64_t j = 0; j < 64; ++j) {
      check_squared_element<Fmt>(special_lane<Fmt>(i), special_lane<Fmt>(j));
      check_squared_element<Fmt>(edge_lane<Fmt>(i), special_lane<Fmt>(j));
      check_squared_element<Fmt>(edge_lane<Fmt>(i), edge_lane<Fmt>(j));
    }
  }
  for (int i = 0; i < random_values; ++i) check_squared_element<Fmt>(random_lane<Fmt>(), random_lane<Fmt>());
  const std::string name = std::string("relu_squared<") + ref_format<Fmt>().name + ">";
  std::printf("%-22s %10lld checks, %lld failures\n", name.c_str(), g_checks - checks_before,
              g_failures - failures_before);
}

// The 16-bit conversions of relu_squared_element.h against definitions of their own.
uint32_t bits_of_float(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

float float_of_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// bfloat16 by its fields (1 sign, 8 exponent, 7 mantissa bits), as decode_float16 does.
double decode_bfloat16_fields(uint64_t bits) {
  const int sign = int((bits >> 15) & 1);
  const int exponent = int((bits >> 7) & 0xff);
  const int mantissa = int(bits & 0x7f);
  double magnitude;
  if (exponent == 0xff) {
    magnitude = mantissa != 0 ? std::nan("") : INFINITY;
  } else if (exponent == 0) {
    magnitude = std::ldexp(double(mantissa), -133);
  } else {
    magnitude = std::ldexp(double(mantissa + 128), exponent - 134);
  }
  return sign ? -magnitude : magnitude;
}

void check_conversion(const char* what, RefFormat f, uint64_t input, uint64_t got, uint64_t expected) {
  ++g_checks;
  if (got != expected) report(what, f, "", input, 0, got, expected);
}

// A float's expected 16-bit pattern: RNE by the reference's encoder; NaN to a quiet NaN with
// the float's sign (the header's documented choice: float16 0x7e00, bfloat16 the top bits).
uint64_t expected_narrow(RefFormat f, float value) {
  const uint32_t bits = bits_of_float(value);
  if (std::isnan(value)) {
    return f.kind == RefKind::kFloat16 ? ((bits >> 16) & 0x8000u) | 0x7e00u : (bits >> 16) | 0x40u;
  }
  return ref_round(f, double(value));
}

void check_narrowing(float value) {
  const RefFormat half = ref_format<Float16Format>();
  const RefFormat bf16 = ref_format<BFloat16Format>();
  const uint32_t bits = bits_of_float(value);
  check_conversion("half_bits_of_float", half, bits, half_bits_of_float(value),
                   expected_narrow(half, value));
  check_conversion("bfloat16_bits_of_float", bf16, bits, bfloat16_bits_of_float(value),
                   expected_narrow(bf16, value));
}

void check_16bit_conversions() {
  const long long failures_before = g_failures;
  const long long checks_before = g_checks;
  const RefFormat half = ref_format<Float16Format>();
  const RefFormat bf16 = ref_format<BFloat16Format>();
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    // Widening: the value by the fields; a NaN keeps its sign and payload (IEEE widening).
    const float wide = float_of_half_bits(uint16_t(h));
    const double value = decode_float16(h);
    const uint32_t nan_bits = ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13);
    check_conversion("float_of_half_bits", half, h, bits_of_float(wide),
                     std::isnan(value) ? nan_bits : bits_of_float(float(value)));
    const float bwide = float_of_bfloat16_bits(uint16_t(h));
    const double bvalue = decode_bfloat16_fields(h);
    check_conversion("float_of_bfloat16_bits", bf16, h, bits_of_float(bwide),
                     std::isnan(bvalue) ? uint32_t(h) << 16 : bits_of_float(float(bvalue)));
    // The round trip, and the points where rounding decides: the midpoint to the next
    // pattern (a tie) and the floats on either side of it.
    check_narrowing(wide);
    check_narrowing(bwide);
    if ((h & 0x7fffu) < 0x7c00u) {
      const float next = float_of_half_bits(uint16_t(h + 1));
      const float mid = float((double(wide) + double(next)) / 2);  // exact: 12 bits
      check_narrowing(mid);
      check_narrowing(std::nextafter(mid, INFINITY));
      check_narrowing(std::nextafter(mid, -INFINITY));
    }
    if ((h & 0x7fffu) < 0x7f80u) {
      const float mid = float_of_bits((h << 16) + 0x8000u);  // halfway to the next bfloat16
      check_narrowing(mid);
      check_narrowing(float_of_bits((h << 16) + 0x7fffu));
      check_narrowing(float_of_bits((h << 16) + 0x8001u));
    }
  }
  for (int i = 0; i < 2000000; ++i) check_narrowing(float_of_bits(uint32_t(next_random())));
  for (uint64_t i = 0; i < 64; ++i) {
    check_narrowing(float_of_bits(uint32_t(special_lane<Float32Format>(i))));
    check_narrowing(float_of_bits(uint32_t(edge_lane<Float32Format>(i))));
  }
  std::printf("%-22s %10lld checks, %lld failures\n", "16-bit conversions", g_checks - checks_before,
              g_failures - failures_before);
}

// ---------------------------------------------------------------- the gated ops
// gated_element.h against the reference's ref_gated* (tests/element_reference.h): NaN results
// compare as NaN. Thresholds as the binding passes them (a double, taken in OpMath).
constexpr double kThresholds[] = {0.0, 0.5, -1.0};

void report_gated(const char* what, RefFormat f, uint64_t a, uint64_t b, uint64_t grad,
                  double threshold, uint64_t got, uint64_t expected) {
  ++g_failures;
  if (g_failures <= 10) {
    std::printf("FAIL %s<%s> a=0x%" PRIx64 " b=0x%" PRIx64 " grad=0x%" PRIx64
                " threshold=%g got=0x%" PRIx64 " expected=0x%" PRIx64 "\n",
                what, f.name, a, b, grad, threshold, got, expected);
  }
}

template <Gate kGate>
constexpr bool kSquaredGate = kGate == Gate::kReluSquaredAndMul;

template <Gate kGate, typename Fmt>
void check_gated_element(uint64_t a, uint64_t b, uint64_t grad, double threshold) {
  constexpr bool kSquared = kSquaredGate<kGate>;
  const RefFormat f = ref_format<Fmt>();
  const auto t = typename OpMath<Fmt>::Type(threshold);
  const auto as = storage_from_bits<Fmt>(a), bs = storage_from_bits<Fmt>(b),
             gs = storage_from_bits<Fmt>(grad);
  const uint64_t out = bits_of<Fmt>(gated_forward<kGate, Fmt>(as, bs, t));
  const uint64_t grad_a = bits_of<Fmt>(gated_grad_a<kGate, Fmt>(gs, as, bs, t));
  const uint64_t grad_b = bits_of<Fmt>(gated_grad_b<kGate, Fmt>(gs, as, t));
  const uint64_t want_out = ref_gated(f, kSquared, a, b, threshold);
  const uint64_t want_a = ref_gated_grad_a(f, kSquared, grad, a, b, threshold);
  const uint64_t want_b = ref_gated_grad_b(f, kSquared, grad, a, threshold);
  g_checks += 3;
  if (!ref_same(f, out, want_out)) {
    report_gated("gated_forward", f, a, b, grad, threshold, out, want_out);
  }
  if (!ref_same(f, grad_a, want_a)) {
    report_gated("gated_grad_a", f, a, b, grad, threshold, grad_a, want_a);
  }
  if (!ref_same(f, grad_b, want_b)) {
    report_gated("gated_grad_b", f, a, b, grad, threshold, grad_b, want_b);
  }
}

// A lane of any kind: random bits, a special, or one whose product leaves the format.
template <typename Fmt>
uint64_t mixed_lane() {
  const uint64_t r = next_random();
  return r % 3 == 0 ? edge_lane<Fmt>(r >> 8) : random_lane<Fmt>();
}

template <Gate kGate, typename Fmt>
void check_gated(int random_values) {
  const long long failures_before = g_failures;
  const long long checks_before = g_checks;
  constexpr int kBits = Fmt::kLaneBits;
  const RefFormat f = ref_format<Fmt>();
  for (double threshold : kThresholds) {
    if constexpr (kBits <= 16) {
      // Every pattern of a, against b and grad of every kind.
      for (uint64_t a = 0; a <= lane_mask(kBits); ++a) {
        for (int k = 0; k < 3; ++k) {
          check_gated_element<kGate, Fmt>(a, mixed_lane<Fmt>(), mixed_lane<Fmt>(), threshold);
        }
        check_gated_element<kGate, Fmt>(a, special_lane<Fmt>(next_random()),
                                        special_lane<Fmt>(next_random()), threshold);
      }
    }
    // a at the threshold and either side of it (float32 and float64 get no sweep of a).
    const double t = ref_is_opmath_double(f) ? threshold : double(float(threshold));
    for (double a : {t, std::nextafter(t, INFINITY), std::nextafter(t, -INFINITY)}) {
      const uint64_t bits = ref_round(f, a);
      for (int k = 0; k < 64; ++k) {
        check_gated_element<kGate, Fmt>(bits, mixed_lane<Fmt>(), mixed_lane<Fmt>(), threshold);
      }
    }
    for (uint64_t i = 0; i < 64; ++i) {
      for (uint64_t j = 0; j < 64; ++j) {
        check_gated_element<kGate, Fmt>(special_lane<Fmt>(i), special_lane<Fmt>(j),
                                        special_lane<Fmt>(i + j), threshold);
        check_gated_element<kGate, Fmt>(edge_lane<Fmt>(i), edge_lane<Fmt>(j),
                                        special_lane<Fmt>(next_random()), threshold);
        check_gated_element<kGate, Fmt>(special_lane<Fmt>(i), edge_lane<Fmt>(j),
                                        edge_lane<Fmt>(next_random()), threshold);
      }
    }
    for (int i = 0; i < random_values; ++i) {
      check_gated_element<kGate, Fmt>(mixed_lane<Fmt>(), mixed_lane<Fmt>(), mixed_lane<Fmt>(),
                                      threshold);
    }
  }
  const std::string name =
      std::string(kSquaredGate<kGate> ? "relu_squared_and_mul<" : "relu_and_mul<") + f.name + ">";
  std::printf("%-30s %10lld checks, %lld failures\n", name.c_str(), g_checks - checks_before,
              g_failures - failures_before);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <seed> [--mutant]\n", argv[0]);
    return 2;
  }
  g_rng_state = std::strtoull(argv[1], nullptr, 0);
  g_mutant = argc > 2 && std::string(argv[2]) == "--mutant";
  std::printf("seed %s%s\n", argv[1], g_mutant ? " (mutant reference)" : "");

  constexpr int kRandom = 200000;
  check_format<Float32Format>(kRandom);
  check_format<Float64Format>(kRandom);
  check_format<Float16Format>(kRandom);
  check_format<BFloat16Format>(kRandom);
  check_format<Int8Format>(kRandom);
  check_format<Int16Format>(kRandom);
  check_format<Int32Format>(kRandom);
  check_format<Int64Format>(kRandom);
  check_format<UInt8Format>(kRandom);
  check_format<UInt16Format>(kRandom);
  check_format<UInt32Format>(kRandom);
  check_format<UInt64Format>(kRandom);
  check_float8_reference();
  check_format<Float8E4M3FnFormat>(kRandom);
  check_format<Float8E5M2Format>(kRandom);
  check_format<Float8FnuzFormat>(kRandom);
  check_16bit_conversions();
  check_squared<Float32Format>(kRandom);
  check_squared<Float64Format>(kRandom);
  check_squared<Float16Format>(kRandom);
  check_squared<BFloat16Format>(kRandom);
  check_gated<Gate::kReluAndMul, Float32Format>(kRandom);
  check_gated<Gate::kReluAndMul, Float64Format>(kRandom);
  check_gated<Gate::kReluAndMul, Float16Format>(kRandom);
  check_gated<Gate::kReluAndMul, BFloat16Format>(kRandom);
  check_gated<Gate::kReluSquaredAndMul, Float32Format>(kRandom);
  check_gated<Gate::kReluSquaredAndMul, Float64Format>(kRandom);
  check_gated<Gate::kReluSquaredAndMul, Float16Format>(kRandom);
  check_gated<Gate::kReluSquaredAndMul, BFloat16Format>(kRandom);

  std::printf("%lld checks, %lld failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
