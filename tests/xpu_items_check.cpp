// Runs the XPU kernels' work-item code (relu-xpu/relu_xpu_items.h) on the CPU: every
// work-item of a launch in turn, as the device would run them in some order, and compares
// the result with the tests' reference (tests/element_reference.h). Covers relu on every
// dtype, relu_squared and the gated ops on the four they take (forward and backward), every
// offset of each array within 16 bytes (aligned and mutually misaligned arrays), in place,
// sizes around every head/vector/tail boundary, the real launch size and small ones that make
// each work-item loop, and guard bytes around the output that must stay untouched.
//
//   xpu_items_check <seed> [--large]
//
// --large: int8, 2^31 + 4099 elements in place (2 GiB), with fewer work-items than vectors,
// so element indexes pass 2^31 inside the work-item loop. Exit status 0 when all match.
#include <cinttypes>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "relu-xpu/relu_xpu_items.h"
#include "tests/element_reference.h"

namespace {

using namespace relu_check;
using relu_kernel::Activation;

long long g_checks = 0;
long long g_failures = 0;

void fail(const std::string& what) {
  ++g_failures;
  if (g_failures <= 10) std::printf("FAIL %s\n", what.c_str());
}

constexpr int kGuard = 64;          // bytes before and after every array
constexpr unsigned char kPoison = 0xa5;

// A byte buffer holding an array of n elements at `offset` bytes past a 64-byte boundary,
// with poisoned guard bytes around it.
struct Buffer {
  std::vector<unsigned char> bytes;
  size_t begin;
  size_t size;

  Buffer(size_t element_size, int64_t n, int offset)
      : bytes(size_t(n) * element_size + 2 * kGuard + 128, kPoison), size(size_t(n) * element_size) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(bytes.data());
    begin = size_t((64 - base % 64) % 64) + kGuard + size_t(offset);
  }
  unsigned char* data() { return bytes.data() + begin; }

  bool guards_intact() const {
    for (size_t i = begin - kGuard; i < begin; ++i) if (bytes[i] != kPoison) return false;
    for (size_t i = begin + size; i < begin + size + kGuard; ++i) if (bytes[i] != kPoison) return false;
    return true;
  }
};

template <typename Fmt>
void fill_random(Buffer& b, int64_t n) {
  constexpr int kSize = Fmt::kLaneBits / 8;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t lane = random_lane<Fmt>();
    std::memcpy(b.data() + i * kSize, &lane, kSize);
  }
}

template <typename Fmt>
uint64_t element_bits(const unsigned char* p, int64_t i) {
  constexpr int kSize = Fmt::kLaneBits / 8;
  uint64_t bits = 0;
  std::memcpy(&bits, p + i * kSize, kSize);
  return bits;
}

std::string describe(const char* what, const char* name, int64_t n, int64_t items,
                     const std::vector<int>& offsets) {
  std::string s = std::string(what) + "<" + name + "> n=" + std::to_string(n) +
                  " items=" + std::to_string(items) + " offsets=";
  for (int o : offsets) s += std::to_string(o) + ",";
  return s;
}

void check_split(const relu_kernel::VectorSplit& s, int64_t n, int element_size,
                 const std::vector<const unsigned char*>& arrays, const std::string& where) {
  ++g_checks;
  const int64_t per_vector = 16 / element_size;
  if (s.head < 0 || s.vectors < 0 || s.tail < 0 || s.head + s.vectors * per_vector + s.tail != n ||
      s.tail_start != s.head + s.vectors * per_vector) {
    fail(where + ": split does not cover n");
  }
  if (s.vectors > 0) {
    for (const unsigned char* a : arrays) {
      if (reinterpret_cast<uintptr_t>(a + s.head * element_size) % 16 != 0) fail(where + ": vectors unaligned");
    }
    if (s.head >= per_vector || s.tail >= per_vector) fail(where + ": head or tail of a whole vector");
  }
  const int64_t items = relu_kernel::launch_items(s);
  if (items % relu_kernel::kWorkGroupSize != 0 || items > INT_MAX || (n > 0 && items == 0)) {
    fail(where + ": bad launch size " + std::to_string(items));
  }
}

template <Activation kActivation>
const char* activation_name() {
  return kActivation == Activation::kRelu ? "relu" : "relu_squared";
}

template <Activation kActivation>
uint64_t ref_forward(RefFormat f, uint64_t x) {
  return kActivation == Activation::kRelu ? ref_relu(f, x) : ref_relu_squared(f, x);
}

// saved: relu's result, relu_squared's x.
template <Activation kActivation>
uint64_t ref_backward(RefFormat f, uint64_t grad, uint64_t saved) {
  return kActivation == Activation::kRelu ? ref_relu_backward(f, grad, saved)
                                          : ref_relu_squared_backward(f, grad, saved);
}

template <Activation kActivation, typename Fmt>
void check_forward(int64_t n, int in_offset, int out_offset, bool in_place, int64_t forced_items) {
  using Ops = relu_kernel::XpuOps<kActivation, Fmt>;
  using Storage = typename Ops::Storage;
  constexpr int kSize = int(sizeof(Storage));
  const RefFormat f = ref_format<Fmt>();
  Buffer in(kSize, n, in_offset);
  Buffer out(kSize, n, in_place ? in_offset : out_offset);
  fill_random<Fmt>(in, n);
  if (in_place) std::memcpy(out.data(), in.data(), size_t(n) * kSize);
  const auto* src = reinterpret_cast<const Storage*>(in_place ? out.data() : in.data());
  auto* dst = reinterpret_cast<Storage*>(out.data());
  const void* arrays[] = {src, dst};
  const relu_kernel::VectorSplit split = relu_kernel::split_dense(n, kSize, arrays, 2);
  const int64_t items = forced_items > 0 ? forced_items : relu_kernel::launch_items(split);
  const std::string name = activation_name<kActivation>();
  const std::string where = describe((in_place ? name + " in place" : name).c_str(), f.name, n,
                                     items, {in_offset, out_offset});
  check_split(split, n, kSize, {in.data(), out.data()}, where);
  for (int64_t item = 0; item < items; ++item) relu_kernel::forward_item<Ops>(split, src, dst, item, items);
  for (int64_t i = 0; i < n; ++i) {
    ++g_checks;
    const uint64_t x = element_bits<Fmt>(in.data(), i);
    if (!ref_same(f, element_bits<Fmt>(out.data(), i), ref_forward<kActivation>(f, x))) {
      fail(where + ": element " + std::to_string(i));
      break;
    }
  }
  ++g_checks;
  if (!out.guards_intact()) fail(where + ": wrote outside the output");
}

template <Activation kActivation, typename Fmt>
void check_backward(int64_t n, int grad_offset, int result_offset, int out_offset, int64_t forced_items) {
  using Ops = relu_kernel::XpuOps<kActivation, Fmt>;
  using Storage = typename Ops::Storage;
  constexpr int kSize = int(sizeof(Storage));
  const RefFormat f = ref_format<Fmt>();
  Buffer grad(kSize, n, grad_offset), result(kSize, n, result_offset), out(kSize, n, out_offset);
  fill_random<Fmt>(grad, n);
  fill_random<Fmt>(result, n);
  const auto* g = reinterpret_cast<const Storage*>(grad.data());
  const auto* r = reinterpret_cast<const Storage*>(result.data());
  auto* dst = reinterpret_cast<Storage*>(out.data());
  const void* arrays[] = {g, r, dst};
  const relu_kernel::VectorSplit split = relu_kernel::split_dense(n, kSize, arrays, 3);
  const int64_t items = forced_items > 0 ? forced_items : relu_kernel::launch_items(split);
  const std::string where = describe((std::string(activation_name<kActivation>()) + "_backward").c_str(),
                                     f.name, n, items, {grad_offset, result_offset, out_offset});
  check_split(split, n, kSize, {grad.data(), result.data(), out.data()}, where);
  for (int64_t item = 0; item < items; ++item) {
    relu_kernel::backward_item<Ops>(split, g, r, dst, item, items);
  }
  for (int64_t i = 0; i < n; ++i) {
    ++g_checks;
    const uint64_t expected = ref_backward<kActivation>(f, element_bits<Fmt>(grad.data(), i),
                                                        element_bits<Fmt>(result.data(), i));
    if (!ref_same(f, element_bits<Fmt>(out.data(), i), expected)) {
      fail(where + ": element " + std::to_string(i));
      break;
    }
  }
  ++g_checks;
  if (!out.guards_intact()) fail(where + ": wrote outside the output");
}

template <Activation kActivation, typename Fmt>
void check_format() {
  const long long failures_before = g_failures;
  const long long checks_before = g_checks;
  constexpr int kSize = int(sizeof(typename relu_kernel::XpuOps<kActivation, Fmt>::Storage));
  std::vector<int64_t> sizes;
  for (int64_t n = 0; n <= 3 * 16 / kSize + 2; ++n) sizes.push_back(n);
  for (int64_t n : {63, 64, 65, 255, 256, 257, 1000, 4099}) sizes.push_back(n);
  sizes.push_back(int64_t(5000 + next_random() % 3000));
  // 0: the real launch size; the others make every work-item loop over several vectors.
  const int64_t item_counts[] = {0, 1, 7, 256};
  for (int64_t n : sizes) {
    for (int64_t items : item_counts) {
      for (int a = 0; a < 16; a += kSize) {
        for (int b = 0; b < 16; b += kSize) check_forward<kActivation, Fmt>(n, a, b, false, items);
        check_forward<kActivation, Fmt>(n, a, a, true, items);
        check_backward<kActivation, Fmt>(n, a, a, a, items);
      }
      for (int k = 0; k < 8; ++k) {  // mixed offsets of the three backward arrays
        const int pick = int(next_random() % 4096);
        check_backward<kActivation, Fmt>(n, (pick % 16) / kSize * kSize, (pick / 16 % 16) / kSize * kSize,
                            (pick / 256) / kSize * kSize, items);
      }
    }
  }
  const std::string name = kActivation == Activation::kRelu
                               ? std::string(ref_format<Fmt>().name)
                               : std::string("relu_squared<") + ref_format<Fmt>().name + ">";
  std::printf("%-22s %10lld checks, %lld failures\n", name.c_str(), g_checks - checks_before,
              g_failures - failures_before);
}

// ---- The gated ops: gated_pass and gated_item, the forward pass and the backward's two, the
// thresholds the binding passes (0, 0.5, -1) as the XPU entry points take them (in OpMath).
using relu_kernel::Gate;

template <Gate kGate>
constexpr bool kSquaredGate = kGate == Gate::kReluSquaredAndMul;

template <Gate kGate>
std::string gate_name() {
  return kSquaredGate<kGate> ? "relu_squared_and_mul" : "relu_and_mul";
}

double random_threshold() {
  const double thresholds[] = {0.0, 0.5, -1.0};
  return thresholds[next_random() % 3];
}

template <typename Op>
void run_gated_pass(const relu_kernel::GatedPass<Op>& pass, int64_t items) {
  for (int64_t item = 0; item < items; ++item) relu_kernel::gated_item<Op>(pass, item, items);
}

template <Gate kGate, typename Fmt>
void check_gated_forward(int64_t n, int a_offset, int b_offset, int out_offset,
                         int64_t forced_items) {
  using Op = relu_kernel::XpuGatedOp<kGate, Fmt>;
  constexpr int kSize = int(sizeof(typename Op::Storage));
  const RefFormat f = ref_format<Fmt>();
  const double threshold = random_threshold();
  Buffer a(kSize, n, a_offset), b(kSize, n, b_offset), out(kSize, n, out_offset);
  fill_random<Fmt>(a, n);
  fill_random<Fmt>(b, n);
  const void* inputs[] = {a.data(), b.data()};
  const auto pass = relu_kernel::gated_pass(
      Op{typename relu_kernel::OpMath<Fmt>::Type(threshold)}, inputs, out.data(), n);
  const int64_t items = forced_items > 0 ? forced_items : relu_kernel::launch_items(pass.split);
  const std::string where = describe((gate_name<kGate>() + " forward").c_str(), f.name, n, items,
                                     {a_offset, b_offset, out_offset});
  check_split(pass.split, n, kSize, {a.data(), b.data(), out.data()}, where);
  run_gated_pass(pass, items);
  for (int64_t i = 0; i < n; ++i) {
    ++g_checks;
    const uint64_t expected = ref_gated(f, kSquaredGate<kGate>, element_bits<Fmt>(a.data(), i),
                                        element_bits<Fmt>(b.data(), i), threshold);
    if (!ref_same(f, element_bits<Fmt>(out.data(), i), expected)) {
      fail(where + ": element " + std::to_string(i));
      break;
    }
  }
  ++g_checks;
  if (!out.guards_intact()) fail(where + ": wrote outside the output");
}

// offsets: grad_out, a, b, grad_a, grad_b.
template <Gate kGate, typename Fmt>
void check_gated_backward(int64_t n, const std::vector<int>& offsets, int64_t forced_items) {
  using GradA = relu_kernel::XpuGatedOp<kGate, Fmt, relu_kernel::GatedPassKind::kGradA>;
  using GradB = relu_kernel::XpuGatedOp<kGate, Fmt, relu_kernel::GatedPassKind::kGradB>;
  constexpr int kSize = int(sizeof(typename GradA::Storage));
  const RefFormat f = ref_format<Fmt>();
  const double threshold = random_threshold();
  const auto t = typename relu_kernel::OpMath<Fmt>::Type(threshold);
  Buffer g(kSize, n, offsets[0]), a(kSize, n, offsets[1]), b(kSize, n, offsets[2]);
  Buffer grad_a(kSize, n, offsets[3]), grad_b(kSize, n, offsets[4]);
  fill_random<Fmt>(g, n);
  fill_random<Fmt>(a, n);
  fill_random<Fmt>(b, n);
  const void* a_inputs[] = {g.data(), a.data(), b.data()};
  const void* b_inputs[] = {g.data(), a.data()};
  const auto a_pass = relu_kernel::gated_pass(GradA{t}, a_inputs, grad_a.data(), n);
  const auto b_pass = relu_kernel::gated_pass(GradB{t}, b_inputs, grad_b.data(), n);
  const int64_t a_items = forced_items > 0 ? forced_items : relu_kernel::launch_items(a_pass.split);
  const int64_t b_items = forced_items > 0 ? forced_items : relu_kernel::launch_items(b_pass.split);
  const std::string where =
      describe((gate_name<kGate>() + " backward").c_str(), f.name, n, a_items, offsets);
  check_split(a_pass.split, n, kSize, {g.data(), a.data(), b.data(), grad_a.data()}, where);
  check_split(b_pass.split, n, kSize, {g.data(), a.data(), grad_b.data()}, where);
  run_gated_pass(a_pass, a_items);
  run_gated_pass(b_pass, b_items);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t gi = element_bits<Fmt>(g.data(), i), ai = element_bits<Fmt>(a.data(), i),
                   bi = element_bits<Fmt>(b.data(), i);
    g_checks += 2;
    if (!ref_same(f, element_bits<Fmt>(grad_a.data(), i),
                  ref_gated_grad_a(f, kSquaredGate<kGate>, gi, ai, bi, threshold))) {
      fail(where + ": grad_a element " + std::to_string(i));
      break;
    }
    if (!ref_same(f, element_bits<Fmt>(grad_b.data(), i),
                  ref_gated_grad_b(f, kSquaredGate<kGate>, gi, ai, threshold))) {
      fail(where + ": grad_b element " + std::to_string(i));
      break;
    }
  }
  g_checks += 2;
  if (!grad_a.guards_intact()) fail(where + ": wrote outside grad_a");
  if (!grad_b.guards_intact()) fail(where + ": wrote outside grad_b");
}

template <Gate kGate, typename Fmt>
void check_gated_format() {
  const long long failures_before = g_failures;
  const long long checks_before = g_checks;
  constexpr int kSize = int(sizeof(typename Fmt::Storage));
  std::vector<int64_t> sizes;
  for (int64_t n = 0; n <= 3 * 16 / kSize + 2; ++n) sizes.push_back(n);
  for (int64_t n : {63, 64, 65, 255, 256, 257, 1000, 4099}) sizes.push_back(n);
  sizes.push_back(int64_t(5000 + next_random() % 3000));
  const int64_t item_counts[] = {0, 1, 7, 256};
  auto random_offset = [] { return int(next_random() % 16) / kSize * kSize; };
  for (int64_t n : sizes) {
    for (int64_t items : item_counts) {
      for (int o = 0; o < 16; o += kSize) {  // every array at one offset: the vector path
        check_gated_forward<kGate, Fmt>(n, o, o, o, items);
        check_gated_backward<kGate, Fmt>(n, {o, o, o, o, o}, items);
      }
      for (int k = 0; k < 8; ++k) {  // mixed offsets: b d elements past a, a fresh output, ...
        check_gated_forward<kGate, Fmt>(n, random_offset(), random_offset(), random_offset(),
                                        items);
        check_gated_backward<kGate, Fmt>(n,
                                         {random_offset(), random_offset(), random_offset(),
                                          random_offset(), random_offset()},
                                         items);
      }
    }
  }
  const std::string name = gate_name<kGate>() + "<" + ref_format<Fmt>().name + ">";
  std::printf("%-30s %10lld checks, %lld failures\n", name.c_str(), g_checks - checks_before,
              g_failures - failures_before);
}

// The split and the launch size of sizes far too large to allocate here: the counts add up
// in 64 bits and the global range stays below 2^31.
void check_huge_splits() {
  const int64_t sizes[] = {INT_MAX, int64_t(1) << 31, (int64_t(1) << 31) + 4099,
                           (int64_t(1) << 40) + 3, int64_t(1) << 62};
  for (int64_t n : sizes) {
    for (int element_size : {1, 2, 4, 8}) {
      for (uintptr_t offset : {0, 8}) {
        const void* arrays[] = {reinterpret_cast<const void*>(uintptr_t(1) << 20 | offset),
                                reinterpret_cast<const void*>(uintptr_t(3) << 20 | offset)};
        const relu_kernel::VectorSplit s = relu_kernel::split_dense(n, element_size, arrays, 2);
        const int64_t items = relu_kernel::launch_items(s);
        ++g_checks;
        if (s.head + s.vectors * (16 / element_size) + s.tail != n || items > INT_MAX ||
            items < relu_kernel::kWorkGroupSize) {
          fail("huge split n=" + std::to_string(n) + " element size " + std::to_string(element_size));
        }
      }
    }
  }
}

// 2^31 + 4099 int8 elements in place, at an unaligned start, with 2^20 + 256 work-items:
// each loops about 2^7 times and indexes pass 2^31.
void check_large() {
  using Fmt = relu_kernel::Int8Format;
  using Ops = relu_kernel::XpuOps<Activation::kRelu, Fmt>;
  const int64_t n = (int64_t(1) << 31) + 4099;
  const int64_t items = (int64_t(1) << 20) + 256;
  Buffer data(1, n, 5);
  auto* p = reinterpret_cast<int8_t*>(data.data());
  // The input is regenerated from the same random state for the comparison: no 2 GiB copy.
  const uint64_t input_state = g_rng_state;
  auto next_input = [](int64_t i, uint64_t& r) {
    if (i % 8 == 0) r = next_random();
    return int8_t(uint8_t(r >> (8 * (i % 8))));
  };
  uint64_t r = 0;
  for (int64_t i = 0; i < n; ++i) p[i] = next_input(i, r);
  const void* arrays[] = {p, p};
  const relu_kernel::VectorSplit split = relu_kernel::split_dense(n, 1, arrays, 2);
  for (int64_t item = 0; item < items; ++item) relu_kernel::forward_item<Ops>(split, p, p, item, items);
  g_rng_state = input_state;
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int8_t x = next_input(i, r);
    wrong += p[i] != (x > 0 ? x : int8_t(0));
  }
  g_checks += n;
  if (wrong != 0) fail("large int8: " + std::to_string(wrong) + " elements wrong");
  if (!data.guards_intact()) fail("large int8: wrote outside the array");
  std::printf("large     %10" PRId64 " elements, %" PRId64 " wrong\n", n, wrong);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <seed> [--large]\n", argv[0]);
    return 2;
  }
  g_rng_state = std::strtoull(argv[1], nullptr, 0);
  std::printf("seed %s\n", argv[1]);
  if (argc > 2 && std::string(argv[2]) == "--large") {
    check_large();
  } else {
    check_format<Activation::kRelu, relu_kernel::Float32Format>();
    check_format<Activation::kRelu, relu_kernel::Float64Format>();
    check_format<Activation::kRelu, relu_kernel::Float16Format>();
    check_format<Activation::kRelu, relu_kernel::BFloat16Format>();
    check_format<Activation::kRelu, relu_kernel::Int8Format>();
    check_format<Activation::kRelu, relu_kernel::Int16Format>();
    check_format<Activation::kRelu, relu_kernel::Int32Format>();
    check_format<Activation::kRelu, relu_kernel::Int64Format>();
    check_format<Activation::kRelu, relu_kernel::UInt8Format>();
    check_format<Activation::kReluSquared, relu_kernel::Float32Format>();
    check_format<Activation::kReluSquared, relu_kernel::Float64Format>();
    check_format<Activation::kReluSquared, relu_kernel::Float16Format>();
    check_format<Activation::kReluSquared, relu_kernel::BFloat16Format>();
    check_gated_format<Gate::kReluAndMul, relu_kernel::Float32Format>();
    check_gated_format<Gate::kReluAndMul, relu_kernel::Float64Format>();
    check_gated_format<Gate::kReluAndMul, relu_kernel::Float16Format>();
    check_gated_format<Gate::kReluAndMul, relu_kernel::BFloat16Format>();
    check_gated_format<Gate::kReluSquaredAndMul, relu_kernel::Float32Format>();
    check_gated_format<Gate::kReluSquaredAndMul, relu_kernel::Float64Format>();
    check_gated_format<Gate::kReluSquaredAndMul, relu_kernel::Float16Format>();
    check_gated_format<Gate::kReluSquaredAndMul, relu_kernel::BFloat16Format>();
    check_huge_splits();
  }
  std::printf("%lld checks, %lld failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
