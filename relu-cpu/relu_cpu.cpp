// CPU backend. Each element goes through relu_forward (relu-common/relu_element.h), in a
// loop with no branch that the compiler vectorizes three times: for AVX-512, for AVX2 and
// for the baseline ISA (SSE2 on x86-64, NEON on aarch64). The variant is picked once, at
// load, from CPUID; RELU_CPU_ISA=avx512|avx2|portable caps it (tests run every variant).
// float16, bfloat16 and float8 stay 16- and 8-bit in registers (bit operations on their
// patterns): nothing is converted to float.
#include <torch/csrc/stable/ops.h>  // torch::stable::parallel_for

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "relu-common/activations.h"
#include "relu-common/backend_entry_points.h"
#include "relu-common/relu_dtypes.h"
#include "relu-common/relu_element.h"

namespace {

using namespace relu_kernel;

// A pass below kSplitBytes of input runs on the calling thread, where waking torch's intra-op
// pool costs more than it saves; a larger one is split into tasks of at least kTaskBytes.
// Split at 256 KiB: float32 took 15.7 us on one thread, 12.7 as two tasks (Zen 3, AVX2, 2 threads).
constexpr int64_t kSplitBytes = 256 * 1024;
// Tasks of 64 KiB: int8 at 512 KiB 9.2 against 10.9 us with 128 KiB tasks (Xeon, AVX-512, 16 threads).
constexpr int64_t kTaskBytes = 64 * 1024;

// Vectors per loop trip: 2 ran float32 at 1-4 MiB 1.3-1.4x faster than 1 with both threads
// busy (Zen 3, AVX2); 4 gained nothing over 2.
constexpr int kVectorsPerLoopTrip = 2;

// out[i] = relu(in[i * kStep]) for i < n. kStep 1: the dense loop. 2-4: a row that reads
// every kStep-th element into a contiguous out (x[:, ::2], x[..., 1::3]); with the step a
// compile-time constant the compiler loads whole vectors and de-interleaves them with
// shuffles, where a variable step leaves it one element at a time (forward_strided_row).
template <Activation kActivation, typename Fmt, int kStep = 1>
__attribute__((always_inline)) inline void forward_span(const typename Fmt::Storage* in,
                                                        typename Fmt::Storage* out,
                                                        int64_t n) {
  // in == out (in place, kStep 1) is allowed: element i is read before it is written, and no
  // element depends on another, which is exactly what ivdep promises.
#pragma GCC ivdep
#pragma GCC unroll kVectorsPerLoopTrip
  for (int64_t i = 0; i < n; ++i) out[i] = activation_forward<kActivation, Fmt>(in[i * kStep]);
}

template <Activation kActivation, typename Fmt>
__attribute__((always_inline)) inline void backward_span(const typename Fmt::Storage* grad,
                                                         const typename Fmt::Storage* saved,
                                                         typename Fmt::Storage* grad_in,
                                                         int64_t n) {
#pragma GCC ivdep
#pragma GCC unroll kVectorsPerLoopTrip
  for (int64_t i = 0; i < n; ++i) {
    grad_in[i] = activation_backward<kActivation, Fmt>(grad[i], saved[i]);
  }
}

// One element with no branch, for the rows the compiler cannot vectorize. GCC compiles the
// scalar compare-and-select of float and double to a conditional jump, mispredicted on half
// of random data: float32 x[:, ::2] ran at 0.2x torch.relu on the dev CPU (Zen 3). As an
// unsigned bit pattern every dtype goes through lanes::relu_forward (one lane per word) and the
// gradient through a mask.
template <size_t kBytes>
struct UnsignedOfSize;
template <> struct UnsignedOfSize<1> { using Type = uint8_t; };
template <> struct UnsignedOfSize<2> { using Type = uint16_t; };
template <> struct UnsignedOfSize<4> { using Type = uint32_t; };
template <> struct UnsignedOfSize<8> { using Type = uint64_t; };

template <typename Fmt>
using ElementBits = typename UnsignedOfSize<sizeof(typename Fmt::Storage)>::Type;

template <typename Fmt>
inline ElementBits<Fmt> bits_of(typename Fmt::Storage x) {
  ElementBits<Fmt> bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

template <typename Fmt>
inline typename Fmt::Storage element_of(ElementBits<Fmt> bits) {
  typename Fmt::Storage x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// A row whose operands are not all contiguous and that no forward_span step covers (a
// strided out=, x[:, ::5]): one element at a time, as TensorIterator's basic loop does for
// such rows. Never inlined into the ISA walks below: compiled for AVX2 the variable-stride
// int8 loop ran 1.5x slower than this one (Zen 3).
template <Activation kActivation, typename Fmt>
__attribute__((noinline)) void forward_strided_row(const typename Fmt::Storage* in,
                                                   int64_t in_stride, typename Fmt::Storage* out,
                                                   int64_t out_stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kActivation == Activation::kRelu) {
      out[i * out_stride] = element_of<Fmt>(lanes::relu_forward<Fmt>(bits_of<Fmt>(in[i * in_stride])));
    } else {
      out[i * out_stride] = activation_forward<kActivation, Fmt>(in[i * in_stride]);
    }
  }
}

template <Activation kActivation, typename Fmt>
__attribute__((noinline)) void backward_strided_row(
    const typename Fmt::Storage* grad, int64_t grad_stride, const typename Fmt::Storage* saved,
    int64_t saved_stride, typename Fmt::Storage* grad_in, int64_t grad_in_stride, int64_t n) {
  using Bits = ElementBits<Fmt>;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kActivation == Activation::kRelu) {
      const Bits result_bits = lanes::relu_forward<Fmt>(bits_of<Fmt>(saved[i * saved_stride]));
      const Bits keep = Bits(Bits(0) - Bits(result_bits != 0));  // all ones where result > 0
      grad_in[i * grad_in_stride] =
          element_of<Fmt>(Bits(bits_of<Fmt>(grad[i * grad_stride]) & keep));
    } else {
      grad_in[i * grad_in_stride] =
          activation_backward<kActivation, Fmt>(grad[i * grad_stride], saved[i * saved_stride]);
    }
  }
}

// ---- Rows of a StridedLayout, as the walk below calls them: row(offsets, n) runs n elements
// from each operand's element offset in `offsets` (operand 0 is the output).

// Forward rows with out contiguous and x read every kStep-th element (1: contiguous).
template <Activation kActivation, typename Fmt, int kStep>
struct ForwardSpanRow {
  using Storage = typename Fmt::Storage;
  const Storage* in;
  Storage* out;
  __attribute__((always_inline)) void operator()(const int64_t (&offsets)[2], int64_t n) const {
    forward_span<kActivation, Fmt, kStep>(in + offsets[1], out + offsets[0], n);
  }
};

template <Activation kActivation, typename Fmt>
struct ForwardStridedRow {
  using Storage = typename Fmt::Storage;
  const Storage* in;
  Storage* out;
  int64_t in_stride, out_stride;
  __attribute__((always_inline)) void operator()(const int64_t (&offsets)[2], int64_t n) const {
    forward_strided_row<kActivation, Fmt>(in + offsets[1], in_stride, out + offsets[0],
                                          out_stride, n);
  }
};

template <Activation kActivation, typename Fmt>
struct BackwardSpanRow {
  using Storage = typename Fmt::Storage;
  const Storage* grad;
  const Storage* saved;
  Storage* grad_in;
  __attribute__((always_inline)) void operator()(const int64_t (&offsets)[3], int64_t n) const {
    backward_span<kActivation, Fmt>(grad + offsets[1], saved + offsets[2], grad_in + offsets[0],
                                    n);
  }
};

template <Activation kActivation, typename Fmt>
struct BackwardStridedRow {
  using Storage = typename Fmt::Storage;
  const Storage* grad;
  const Storage* saved;
  Storage* grad_in;
  int64_t grad_stride, saved_stride, grad_in_stride;
  __attribute__((always_inline)) void operator()(const int64_t (&offsets)[3], int64_t n) const {
    backward_strided_row<kActivation, Fmt>(grad + offsets[1], grad_stride, saved + offsets[2],
                                           saved_stride, grad_in + offsets[0], grad_in_stride, n);
  }
};

// A row of any elementwise map out = fn(in...) over kInputs inputs; kUnitStride: every operand
// has stride 1 along the row, the loop the compiler vectorizes (the gated passes).
template <int kInputs, bool kUnitStride, typename Storage, typename Fn>
struct MapRow {
  const Storage* in[kInputs];
  Storage* out;
  int64_t strides[kInputs + 1];  // along the row: out's, then the inputs'
  Fn fn;

  template <size_t kOperands>
  __attribute__((always_inline)) void operator()(const int64_t (&offsets)[kOperands],
                                                 int64_t n) const {
    static_assert(kOperands == kInputs + 1, "a walk of out and the inputs");
    Storage* o = out + offsets[0];
    const Storage* p0 = in[0] + offsets[1];
    const Storage* p1 = in[1] + offsets[2];
    if constexpr (kInputs == 2 && kUnitStride) {
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) o[i] = fn(p0[i], p1[i]);
    } else if constexpr (kInputs == 2) {
      for (int64_t i = 0; i < n; ++i) o[i * strides[0]] = fn(p0[i * strides[1]], p1[i * strides[2]]);
    } else if constexpr (kUnitStride) {
      const Storage* p2 = in[2] + offsets[3];
#pragma GCC ivdep
      for (int64_t i = 0; i < n; ++i) o[i] = fn(p0[i], p1[i], p2[i]);
    } else {
      const Storage* p2 = in[2] + offsets[3];
      for (int64_t i = 0; i < n; ++i) {
        o[i * strides[0]] = fn(p0[i * strides[1]], p1[i * strides[2]], p2[i * strides[3]]);
      }
    }
  }
};

// Runs row(offsets, n) over the elements [begin, end) of `layout`, in the order its
// dimensions give (dimension 0 innermost). It finds begin's multi-index by division once,
// then runs whole rows along dimension 1 in a loop of their own, and carries into the outer
// dimensions like an odometer only where dimension 1 wraps; rows cut by begin or end go one
// by one. Compiled once per ISA with the row inlined, as TensorIterator's 2-D loops are:
// with a call per row and the layout read through its reference on every row, int8 rows of
// 96 bytes spent more time in the walk than in the rows and ran at 0.80x clamp_min(out=)
// (Zen 3 and Xeon).
template <int kOperands, typename Row>
__attribute__((always_inline)) inline void walk_rows(const StridedLayout& layout, int64_t begin,
                                                     int64_t end, const Row& row) {
  constexpr int kMaxDims = StridedLayout::kMaxDims;
  // At least two dimensions: a 1-D layout gets an outer one of size 1.
  const int32_t dims = std::max<int32_t>(layout.dims, 2);
  int64_t sizes[kMaxDims];
  int64_t strides[kOperands][kMaxDims];
  for (int32_t d = 0; d < dims; ++d) {
    sizes[d] = d < layout.dims ? layout.sizes[d] : 1;
    for (int k = 0; k < kOperands; ++k) strides[k][d] = d < layout.dims ? layout.strides[k][d] : 0;
  }
  int64_t index[kMaxDims];
  int64_t offsets[kOperands] = {};
  int64_t rest = begin;
  for (int32_t d = 0; d < dims; ++d) {
    index[d] = rest % sizes[d];
    rest /= sizes[d];
    for (int k = 0; k < kOperands; ++k) offsets[k] += index[d] * strides[k][d];
  }
  // Steps dimension `first` by one, carrying into the ones above it.
  const auto step_from = [&](int32_t first) {
    for (int32_t d = first; d < dims; ++d) {
      for (int k = 0; k < kOperands; ++k) offsets[k] += strides[k][d];
      if (++index[d] < sizes[d]) return;
      index[d] = 0;
      for (int k = 0; k < kOperands; ++k) offsets[k] -= sizes[d] * strides[k][d];
    }
  };
  const int64_t row_size = sizes[0];
  for (int64_t position = begin; position < end;) {
    if (index[0] != 0 || end - position < row_size) {
      // A row cut by the task's start or end.
      const int64_t n = std::min(row_size - index[0], end - position);
      row(offsets, n);
      position += n;
      if (position == end) break;
      for (int k = 0; k < kOperands; ++k) offsets[k] -= index[0] * strides[k][0];
      index[0] = 0;
      step_from(1);
      continue;
    }
    const int64_t rows = std::min(sizes[1] - index[1], (end - position) / row_size);
    for (int64_t r = 0; r < rows; ++r) {
      row(offsets, row_size);
      for (int k = 0; k < kOperands; ++k) offsets[k] += strides[k][1];
    }
    position += rows * row_size;
    index[1] += rows;
    if (index[1] == sizes[1]) {
      index[1] = 0;
      for (int k = 0; k < kOperands; ++k) offsets[k] -= sizes[1] * strides[k][1];
      step_from(2);
    }
  }
}

// ---- The loops, compiled once per ISA.
enum class Isa { kPortable, kAvx2, kAvx512 };

#if defined(__x86_64__) && defined(__clang__)
// clang, and icpx (the XPU build's compiler, built on clang), take no tuning option in a
// target attribute and drop the whole attribute over one: the AVX-512 loop would build as
// SSE2. There the ISA alone; the vector width is clang's choice.
#define RELU_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define RELU_TARGET_AVX2 __attribute__((target("avx2")))
#elif defined(__x86_64__)
// AVX-512 instructions (masks, VL forms) on 256-bit vectors: the 512-bit loop ran slower from
// cache than the 256-bit one (Zen 4); GCC's own tuning for Intel AVX-512 parts prefers 256 too.
#define RELU_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=256")))
#define RELU_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define RELU_TARGET_AVX512
#define RELU_TARGET_AVX2
#endif

// Each loop once per ISA: the same inlined body, vectorized for another target.
template <Activation kActivation, typename Fmt>
RELU_TARGET_AVX512 void forward_avx512(const typename Fmt::Storage* in,
                                       typename Fmt::Storage* out, int64_t n) {
  forward_span<kActivation, Fmt>(in, out, n);
}
template <Activation kActivation, typename Fmt>
RELU_TARGET_AVX2 void forward_avx2(const typename Fmt::Storage* in, typename Fmt::Storage* out,
                                   int64_t n) {
  forward_span<kActivation, Fmt>(in, out, n);
}
template <Activation kActivation, typename Fmt>
void forward_portable(const typename Fmt::Storage* in, typename Fmt::Storage* out, int64_t n) {
  forward_span<kActivation, Fmt>(in, out, n);
}

template <Activation kActivation, typename Fmt>
RELU_TARGET_AVX512 void backward_avx512(const typename Fmt::Storage* grad,
                                        const typename Fmt::Storage* saved,
                                        typename Fmt::Storage* grad_in, int64_t n) {
  backward_span<kActivation, Fmt>(grad, saved, grad_in, n);
}
template <Activation kActivation, typename Fmt>
RELU_TARGET_AVX2 void backward_avx2(const typename Fmt::Storage* grad,
                                    const typename Fmt::Storage* saved,
                                    typename Fmt::Storage* grad_in, int64_t n) {
  backward_span<kActivation, Fmt>(grad, saved, grad_in, n);
}
template <Activation kActivation, typename Fmt>
void backward_portable(const typename Fmt::Storage* grad, const typename Fmt::Storage* saved,
                       typename Fmt::Storage* grad_in, int64_t n) {
  backward_span<kActivation, Fmt>(grad, saved, grad_in, n);
}

template <int kOperands, typename Row>
RELU_TARGET_AVX512 void walk_avx512(const StridedLayout& layout, int64_t begin, int64_t end,
                                    const Row& row) {
  walk_rows<kOperands>(layout, begin, end, row);
}
template <int kOperands, typename Row>
RELU_TARGET_AVX2 void walk_avx2(const StridedLayout& layout, int64_t begin, int64_t end,
                                const Row& row) {
  walk_rows<kOperands>(layout, begin, end, row);
}
template <int kOperands, typename Row>
void walk_portable(const StridedLayout& layout, int64_t begin, int64_t end, const Row& row) {
  walk_rows<kOperands>(layout, begin, end, row);
}

Isa best_supported_isa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2")) return Isa::kAvx2;
#endif
  return Isa::kPortable;
}

Isa select_isa() {
  const Isa best = best_supported_isa();
  const char* cap = std::getenv("RELU_CPU_ISA");
  if (cap == nullptr || *cap == '\0') return best;
  const std::string wanted(cap);
  Isa requested;
  if (wanted == "avx512") {
    requested = Isa::kAvx512;
  } else if (wanted == "avx2") {
    requested = Isa::kAvx2;
  } else if (wanted == "portable") {
    requested = Isa::kPortable;
  } else {
    std::fprintf(stderr, "relu: ignoring RELU_CPU_ISA=%s; accepted: avx512, avx2, portable\n",
                 wanted.c_str());
    return best;
  }
  return requested < best ? requested : best;  // never run what the CPU lacks
}

const Isa kIsa = select_isa();

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "portable";
  }
}

// Of a loop's three compilations, the one for the ISA this process runs.
template <typename Fn>
Fn* for_isa(Fn* portable, Fn* avx2, Fn* avx512) {
  if (kIsa == Isa::kAvx512) return avx512;
  if (kIsa == Isa::kAvx2) return avx2;
  return portable;
}

// Runs span(begin, end) over [0, n): on this thread below kSplitBytes of input, else over
// torch's intra-op pool in tasks of at least kTaskBytes. torch::stable::parallel_for calls
// at::parallel_for inside libtorch, compiled with torch's OpenMP: this file needs no
// -fopenmp (at::parallel_for compiled here without it silently ran serially).
template <typename Span>
void run_split(int64_t n, int64_t element_bytes, const Span& span) {
  if (n < kSplitBytes / element_bytes) {
    span(0, n);  // the common small call: no shim call at all
    return;
  }
  torch::stable::parallel_for(0, n, std::max<int64_t>(1, kTaskBytes / element_bytes), span);
}

// Runs row over every element of `layout` (walk_rows), split like run_split into tasks of
// kTaskBytes or more.
template <int kOperands, typename Row>
void walk_layout(const StridedLayout& layout, int64_t element_bytes, const Row& row) {
  auto* walk = for_isa(&walk_portable<kOperands, Row>, &walk_avx2<kOperands, Row>,
                       &walk_avx512<kOperands, Row>);
  run_split(layout.numel(), element_bytes,
            [&](int64_t begin, int64_t end) { walk(layout, begin, end, row); });
}

}  // namespace

std::string relu_cpu_isa() { return isa_name(kIsa); }

void relu_flat_cpu(Activation activation, ScalarType dtype, const void* in, void* out,
                   int64_t n) {
  visit_forward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto span = for_isa(&forward_portable<kActivation, Fmt>,
                              &forward_avx2<kActivation, Fmt>, &forward_avx512<kActivation, Fmt>);
    const auto* src = static_cast<const Storage*>(in);
    auto* dst = static_cast<Storage*>(out);
    run_split(n, sizeof(Storage),
              [&](int64_t begin, int64_t end) { span(src + begin, dst + begin, end - begin); });
  });
}

void relu_strided_cpu(Activation activation, ScalarType dtype, const void* in, void* out,
                      const StridedLayout& layout) {
  visit_forward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto* src = static_cast<const Storage*>(in);
    auto* dst = static_cast<Storage*>(out);
    const int64_t out_stride = layout.strides[0][0], in_stride = layout.strides[1][0];
    // Every row of a layout has the same strides: the row loop is chosen once.
    if (out_stride == 1 && in_stride >= 1 && in_stride <= 4) {
      const auto walk_stepped = [&](auto step) {
        walk_layout<2>(layout, sizeof(Storage),
                       ForwardSpanRow<kActivation, Fmt, decltype(step)::value>{src, dst});
      };
      switch (in_stride) {
        case 1: return walk_stepped(std::integral_constant<int, 1>{});
        case 2: return walk_stepped(std::integral_constant<int, 2>{});
        case 3: return walk_stepped(std::integral_constant<int, 3>{});
        default: return walk_stepped(std::integral_constant<int, 4>{});
      }
    }
    walk_layout<2>(layout, sizeof(Storage),
                   ForwardStridedRow<kActivation, Fmt>{src, dst, in_stride, out_stride});
  });
}

void relu_backward_strided_cpu(Activation activation, ScalarType dtype, const void* grad_out,
                               const void* saved, void* grad_in, const StridedLayout& layout) {
  visit_backward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto* grad = static_cast<const Storage*>(grad_out);
    const auto* kept = static_cast<const Storage*>(saved);
    auto* dst = static_cast<Storage*>(grad_in);
    const int64_t dst_stride = layout.strides[0][0], grad_stride = layout.strides[1][0],
                  saved_stride = layout.strides[2][0];
    if (dst_stride == 1 && grad_stride == 1 && saved_stride == 1) {
      walk_layout<3>(layout, sizeof(Storage), BackwardSpanRow<kActivation, Fmt>{grad, kept, dst});
    } else {
      walk_layout<3>(layout, sizeof(Storage),
                     BackwardStridedRow<kActivation, Fmt>{grad, kept, dst, grad_stride,
                                                          saved_stride, dst_stride});
    }
  });
}

void relu_backward_flat_cpu(Activation activation, ScalarType dtype, const void* grad_out,
                            const void* saved, void* grad_in, int64_t n) {
  visit_backward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto span = for_isa(&backward_portable<kActivation, Fmt>,
                              &backward_avx2<kActivation, Fmt>,
                              &backward_avx512<kActivation, Fmt>);
    const auto* grad = static_cast<const Storage*>(grad_out);
    const auto* kept = static_cast<const Storage*>(saved);
    auto* dst = static_cast<Storage*>(grad_in);
    run_split(n, sizeof(Storage), [&](int64_t begin, int64_t end) {
      span(grad + begin, kept + begin, dst + begin, end - begin);
    });
  });
}

namespace {

// out = fn(in...) over the first kInputs + 1 operands of `layout` (operand 0: out).
template <int kInputs, typename Storage, typename Fn>
void run_map(const StridedLayout& layout, const void* const (&in)[kInputs], void* out,
             const Fn& fn) {
  bool unit = true;
  int64_t strides[kInputs + 1];
  for (int k = 0; k <= kInputs; ++k) {
    strides[k] = layout.strides[k][0];
    unit = unit && strides[k] == 1;
  }
  const auto walk = [&](auto row) {
    row.out = static_cast<Storage*>(out);
    for (int k = 0; k < kInputs; ++k) row.in[k] = static_cast<const Storage*>(in[k]);
    for (int k = 0; k <= kInputs; ++k) row.strides[k] = strides[k];
    walk_layout<kInputs + 1>(layout, sizeof(Storage), row);
  };
  if (unit) {
    walk(MapRow<kInputs, true, Storage, Fn>{{}, nullptr, {}, fn});
  } else {
    walk(MapRow<kInputs, false, Storage, Fn>{{}, nullptr, {}, fn});
  }
}

}  // namespace

void gated_strided_cpu(Gate gate, ScalarType dtype, const void* a, const void* b, void* out,
                       const StridedLayout& layout, double threshold) {
  visit_gated(gate, dtype, [&](auto gate_constant, auto fmt) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto t = typename OpMath<Fmt>::Type(threshold);
    const void* inputs[] = {a, b};
    run_map<2, Storage>(layout, inputs, out, [t](Storage av, Storage bv) {
      return gated_forward<kGate, Fmt>(av, bv, t);
    });
  });
}

void gated_backward_strided_cpu(Gate gate, ScalarType dtype, const void* grad_out, const void* a,
                                const void* b, void* grad_a, void* grad_b,
                                const StridedLayout& layout, double threshold) {
  visit_gated(gate, dtype, [&](auto gate_constant, auto fmt) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto t = typename OpMath<Fmt>::Type(threshold);
    const void* a_inputs[] = {grad_out, a, b};
    run_map<3, Storage>(layout, a_inputs, grad_a, [t](Storage g, Storage av, Storage bv) {
      return gated_grad_a<kGate, Fmt>(g, av, bv, t);
    });
    const void* b_inputs[] = {grad_out, a};
    run_map<2, Storage>(layout, b_inputs, grad_b, [t](Storage g, Storage av) {
      return gated_grad_b<kGate, Fmt>(g, av, t);
    });
  });
}
