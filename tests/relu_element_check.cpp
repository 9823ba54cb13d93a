// Checks relu-common/relu_element.h, the element logic every backend runs, against a
// reference written here from the definition: decode the value, out = x > 0 ? x : +0.
// Nothing below reuses the header's bit tricks: float16 is decoded field by field,
// bfloat16/float32/float64 through the host's float types, integers by sign extension.
//
//   relu_element_check <seed> [--mutant]
//
// Exhaustive where the domain is small: every float16, bfloat16 and int16 bit pattern and
// every int8/uint8 value, for relu_element, relu_backward_element and relu_lanes (each
// pattern in each lane position of 16-, 32- and 64-bit words). Everything else on random
// words mixing uniform bits with special values (+-0, +-inf, NaNs, denormals, extremes).
// --mutant checks against a reference that keeps NaN (torch's CPU relu): the run must fail,
// which shows that a wrong kernel would be caught. Exit status: 0 when everything matches.
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "relu-common/relu_element.h"

namespace {

using namespace relu_kernel;

bool g_mutant = false;
long long g_checks = 0;
long long g_failures = 0;

uint64_t g_rng_state = 0;

uint64_t next_random() {  // splitmix64
  uint64_t z = (g_rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// ---------------------------------------------------------------- the reference
enum class RefKind { kFloat16, kBFloat16, kFloat32, kFloat64, kSigned, kUnsigned };

struct RefFormat {
  RefKind kind;
  int bits;
  const char* name;
};

template <typename Fmt> RefFormat ref_format();
template <> RefFormat ref_format<Float16Format>() { return {RefKind::kFloat16, 16, "float16"}; }
template <> RefFormat ref_format<BFloat16Format>() { return {RefKind::kBFloat16, 16, "bfloat16"}; }
template <> RefFormat ref_format<Float32Format>() { return {RefKind::kFloat32, 32, "float32"}; }
template <> RefFormat ref_format<Float64Format>() { return {RefKind::kFloat64, 64, "float64"}; }
template <> RefFormat ref_format<Int8Format>() { return {RefKind::kSigned, 8, "int8"}; }
template <> RefFormat ref_format<Int16Format>() { return {RefKind::kSigned, 16, "int16"}; }
template <> RefFormat ref_format<Int32Format>() { return {RefKind::kSigned, 32, "int32"}; }
template <> RefFormat ref_format<Int64Format>() { return {RefKind::kSigned, 64, "int64"}; }
template <> RefFormat ref_format<UInt8Format>() { return {RefKind::kUnsigned, 8, "uint8"}; }

uint64_t lane_mask(int bits) { return bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits, decoded by hand.
double decode_float16(uint64_t bits) {
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

// Whether the element with these bits is > 0. NaN compares false.
bool ref_positive(RefFormat f, uint64_t bits) {
  switch (f.kind) {
    case RefKind::kFloat16:
      return decode_float16(bits) > 0.0;
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

bool ref_is_nan(RefFormat f, uint64_t bits) {
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
uint64_t ref_relu(RefFormat f, uint64_t bits) {
  if (g_mutant && ref_is_nan(f, bits)) return bits;  // deliberately wrong: NaN -> NaN
  return ref_positive(f, bits) ? bits : 0;
}

uint64_t ref_relu_backward(RefFormat f, uint64_t grad, uint64_t result) {
  if (g_mutant && ref_is_nan(f, result)) return grad;
  return ref_positive(f, result) ? grad : 0;
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

// One word through relu_lanes, lane by lane against the reference.
template <typename Fmt, typename Word>
void check_lanes_word(Word word) {
  const RefFormat f = ref_format<Fmt>();
  const Word got = relu_lanes<Fmt>(word);
  for (int shift = 0; shift < int(8 * sizeof(Word)); shift += Fmt::kLaneBits) {
    const uint64_t lane = (uint64_t(word) >> shift) & lane_mask(f.bits);
    const uint64_t got_lane = (uint64_t(got) >> shift) & lane_mask(f.bits);
    ++g_checks;
    if (got_lane != ref_relu(f, lane)) {
      report("relu_lanes", f, word_name<Word>(), uint64_t(word), uint64_t(shift), uint64_t(got),
             ref_relu(f, lane) << shift);
    }
  }
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
  const uint64_t got = bits_of<Fmt>(relu_element<Fmt>(storage_from_bits<Fmt>(x)));
  ++g_checks;
  if (got != ref_relu(f, x)) report("relu_element", f, "", x, 0, got, ref_relu(f, x));
  const uint64_t got_grad = bits_of<Fmt>(
      relu_backward_element<Fmt>(storage_from_bits<Fmt>(grad), storage_from_bits<Fmt>(x)));
  ++g_checks;
  if (got_grad != ref_relu_backward(f, grad, x)) {
    report("relu_backward_element", f, "", x, grad, got_grad, ref_relu_backward(f, grad, x));
  }
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
  const Word got = relu_word<Fmt>(word);
  for (int shift = 0; shift < int(8 * sizeof(Word)); shift += Fmt::kLaneBits) {
    const uint64_t lane = (uint64_t(word) >> shift) & lane_mask(f.bits);
    const uint64_t got_lane = (uint64_t(got) >> shift) & lane_mask(f.bits);
    ++g_checks;
    if (got_lane != ref_relu(f, lane)) {
      report("relu_word", f, word_name<Word>(), uint64_t(word), uint64_t(shift), uint64_t(got),
             ref_relu(f, lane) << shift);
    }
  }
}

template <typename Fmt>
Word16<Fmt> random_word16() {
  Word16<Fmt> v;
  for (int i = 0; i < Word16<Fmt>::kWords; ++i) v.words[i] = random_word<Fmt, typename Fmt::Word>();
  return v;
}

template <typename Fmt>
uint64_t element_of(const Word16<Fmt>& v, int i) {
  constexpr int kSize = Fmt::kLaneBits / 8;
  uint64_t bits = 0;
  std::memcpy(&bits, reinterpret_cast<const unsigned char*>(v.words) + i * kSize, kSize);
  return bits;
}

template <typename Fmt>
void check_word16(const Word16<Fmt>& x, const Word16<Fmt>& grad) {
  const RefFormat f = ref_format<Fmt>();
  const Word16<Fmt> out = relu_word16<Fmt>(x);
  const Word16<Fmt> grad_in = relu_backward_word16<Fmt>(grad, x);
  for (int i = 0; i < Word16<Fmt>::kElements; ++i) {
    const uint64_t xi = element_of<Fmt>(x, i);
    const uint64_t gi = element_of<Fmt>(grad, i);
    g_checks += 2;
    if (element_of<Fmt>(out, i) != ref_relu(f, xi)) {
      report("relu_word16", f, "", xi, uint64_t(i), element_of<Fmt>(out, i), ref_relu(f, xi));
    }
    if (element_of<Fmt>(grad_in, i) != ref_relu_backward(f, gi, xi)) {
      report("relu_backward_word16", f, "", xi, gi, element_of<Fmt>(grad_in, i),
             ref_relu_backward(f, gi, xi));
    }
  }
}

template <typename Fmt>
void check_words(int random_words) {
  using Word = typename Fmt::Word;
  for (int i = 0; i < random_words; ++i) check_word<Fmt>(random_word<Fmt, Word>());
  // Word16 with each exhaustively-enumerable pattern in each element position.
  constexpr int kBits = Fmt::kLaneBits;
  if constexpr (kBits <= 16) {
    for (uint64_t pattern = 0; pattern <= lane_mask(kBits); ++pattern) {
      Word16<Fmt> x = random_word16<Fmt>();
      const int position = int(next_random() % Word16<Fmt>::kElements);
      std::memcpy(reinterpret_cast<unsigned char*>(x.words) + position * (kBits / 8), &pattern,
                  kBits / 8);
      check_word16<Fmt>(x, random_word16<Fmt>());
    }
  }
  for (int i = 0; i < random_words / 4; ++i) check_word16<Fmt>(random_word16<Fmt>(), random_word16<Fmt>());
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
  std::printf("%-9s %10lld checks, %lld failures\n", ref_format<Fmt>().name,
              g_checks - checks_before, g_failures - failures_before);
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

  std::printf("%lld checks, %lld failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
