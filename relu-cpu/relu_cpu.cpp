// CPU backend. Each element goes through relu-common's element functions in a loop with no
// branch that the compiler vectorizes three times: for AVX-512, for AVX2 and for the baseline
// ISA (SSE2 on x86-64, NEON on aarch64). The variant is picked once, at load, from CPUID;
// RELU_CPU_ISA=avx512|avx2|portable caps it (tests run every variant). float16, bfloat16 and
// float8 stay 16- and 8-bit in registers (bit operations on their patterns).
#include <torch/csrc/stable/ops.h>  // torch::stable::parallel_for

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "relu-common/activations.h"
#include "relu-common/backend_entry_points.h"
#include "relu-common/relu_dtypes.h"
#include "relu-common/relu_element.h"
#include "relu-cpu/tuning.h"

namespace {

using namespace relu_kernel;
using namespace relu_kernel::cpu_tuning;

template <typename Fmt>
using StorageBits = UnsignedOfSize<int(sizeof(typename Fmt::Storage))>;

template <typename Fmt>
inline StorageBits<Fmt> bits_of(typename Fmt::Storage x) {
  StorageBits<Fmt> bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

template <typename Fmt>
inline typename Fmt::Storage storage_of(StorageBits<Fmt> bits) {
  typename Fmt::Storage x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// The element functions as functors. kScalar: for loops the compiler leaves one element at a
// time, where GCC turns a float compare-and-select into a jump mispredicted on random signs;
// there relu runs on the bit pattern (lanes::relu_forward, one lane per word) and its gradient as a mask.
template <Activation kActivation, typename Fmt, bool kScalar = false>
struct ForwardOp {
  using Storage = typename Fmt::Storage;
  static constexpr bool kActivationOp = true;
  __attribute__((always_inline)) Storage operator()(Storage x) const {
    if constexpr (kScalar && kActivation == Activation::kRelu) {
      return storage_of<Fmt>(lanes::relu_forward<Fmt>(bits_of<Fmt>(x)));
    } else {
      return activation_forward<kActivation, Fmt>(x);
    }
  }
};

template <Activation kActivation, typename Fmt, bool kScalar = false>
struct BackwardOp {
  using Storage = typename Fmt::Storage;
  static constexpr bool kActivationOp = true;
  __attribute__((always_inline)) Storage operator()(Storage grad, Storage saved) const {
    if constexpr (kScalar && kActivation == Activation::kRelu) {
      using Bits = StorageBits<Fmt>;
      const Bits keep = Bits(Bits(0) - Bits(lanes::relu_forward<Fmt>(bits_of<Fmt>(saved)) != 0));
      return storage_of<Fmt>(Bits(bits_of<Fmt>(grad) & keep));
    } else {
      return activation_backward<kActivation, Fmt>(grad, saved);
    }
  }
};

// out[i] = op(in[i * kStep]...) for i < n. kStep 2-4 reads every kStep-th element into a
// contiguous out (x[:, ::2]): as a compile-time constant, the compiler loads whole vectors and
// de-interleaves them with shuffles. in == out (kStep 1) is allowed: element i is read before it
// is written and no element depends on another, which is what ivdep promises.
// The activations' loops take the measured forms (kActivationOp): dense loops unrolled
// (tuning.h), strided rows out of line, in the baseline ISA, where their variable-stride loop
// runs faster than compiled for AVX2. The gated ops' loops take neither.
template <typename Op, typename = void>
constexpr bool kActivationOp = false;
template <typename Op>
constexpr bool kActivationOp<Op, std::void_t<decltype(Op::kActivationOp)>> = Op::kActivationOp;

template <int kStep, typename Op, typename Storage, typename... In>
__attribute__((always_inline)) inline void dense_loop(const Op& op, Storage* out, int64_t n,
                                                      const In*... in) {
  if constexpr (kActivationOp<Op>) {
#pragma GCC ivdep
#pragma GCC unroll kVectorsPerLoopTrip
    for (int64_t i = 0; i < n; ++i) out[i] = op(in[i * kStep]...);
  } else {
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) out[i] = op(in[i * kStep]...);
  }
}

// out[i * out_stride] = op(in_k[i * strides_k]...): rows no dense_loop covers (a strided out=,
// x[:, ::5]), one element at a time.
template <typename Op, typename Storage, int kInputs, size_t... k>
__attribute__((always_inline)) inline void strided_loop(const Op& op, Storage* out,
                                                        int64_t out_stride,
                                                        const Storage* const (&inputs)[kInputs],
                                                        const int64_t (&strides)[kInputs],
                                                        int64_t n, std::index_sequence<k...>) {
  const Storage* in[] = {inputs[k]...};  // local copies: a byte store could alias the arrays
  const int64_t stride[] = {strides[k]...};
  for (int64_t i = 0; i < n; ++i) out[i * out_stride] = op(in[k][i * stride[k]]...);
}

template <typename... Args>
__attribute__((noinline)) void strided_loop_out_of_line(const Args&... args) {
  strided_loop(args...);
}

// A row of a StridedLayout walk: row(offsets, n) computes out = op(in...) over n elements from
// each operand's offset (operand 0 is out). kStep >= 1: out contiguous and every input read
// every kStep-th element (dense_loop); kStep 0: the strides along the row, `strides`.
template <int kStep, typename Storage, int kInputs, typename Op>
struct Row {
  static constexpr int kOperands = kInputs + 1;
  const Storage* in[kInputs];
  Storage* out;
  int64_t strides[kOperands];  // along the row: out's, then the inputs'
  Op op;

  __attribute__((always_inline)) void operator()(const int64_t (&offsets)[kOperands],
                                                 int64_t n) const {
    run(offsets, n, std::make_index_sequence<kInputs>{});
  }

  template <size_t... k>
  __attribute__((always_inline)) void run(const int64_t (&offsets)[kOperands], int64_t n,
                                          std::index_sequence<k...> inputs) const {
    if constexpr (kStep > 0) {
      dense_loop<kStep>(op, out + offsets[0], n, (in[k] + offsets[k + 1])...);
    } else {
      const Storage* const starts[kInputs] = {(in[k] + offsets[k + 1])...};
      const int64_t in_strides[kInputs] = {strides[k + 1]...};
      if constexpr (kActivationOp<Op>) {
        strided_loop_out_of_line(op, out + offsets[0], strides[0], starts, in_strides, n, inputs);
      } else {
        strided_loop(op, out + offsets[0], strides[0], starts, in_strides, n, inputs);
      }
    }
  }
};

// A dense pass of Op over inputs of types In..., in the form the ISA variants compile.
template <typename Op, typename... In>
struct DensePass {
  using Storage = typename Op::Storage;
  __attribute__((always_inline)) static void run(const In*... in, Storage* out, int64_t n) {
    dense_loop<1>(Op{}, out, n, in...);
  }
};

// Runs row(offsets, n) over the elements [begin, end) of `layout`, in the order its
// dimensions give (dimension 0 innermost). It finds begin's multi-index by division once,
// then runs whole rows along dimension 1 in a loop of their own, and carries into the outer
// dimensions like an odometer only where dimension 1 wraps; rows cut by begin or end go one
// by one. Compiled once per ISA with the row inlined, as TensorIterator's 2-D loops are: a call
// per row, with the layout reread on every row, costs more than short rows take.
template <int kOperands, typename RowFn>
struct WalkRows {
  __attribute__((always_inline)) static void run(const StridedLayout& layout, int64_t begin,
                                                 int64_t end, const RowFn& row) {
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
};

// ---- The loops, compiled once per ISA.
enum class Isa { kPortable, kAvx2, kAvx512 };

#if defined(__x86_64__) && defined(__clang__)
// clang, and icpx (the XPU build's compiler), drop a whole target attribute over a tuning
// option they do not take, which would build the AVX-512 loop as SSE2: the ISA alone there.
#define RELU_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define RELU_TARGET_AVX2 __attribute__((target("avx2")))
#elif defined(__x86_64__)
#define RELU_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq," RELU_AVX512_VECTOR_WIDTH)))
#define RELU_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define RELU_TARGET_AVX512
#define RELU_TARGET_AVX2
#endif

// Loop::run compiled once per ISA: the same inlined body, vectorized for each target.
template <typename Loop, typename Signature = decltype(Loop::run)>
struct Compiled;
template <typename Loop, typename... Args>
struct Compiled<Loop, void(Args...)> {
  RELU_TARGET_AVX512 static void avx512(Args... args) { Loop::run(args...); }
  RELU_TARGET_AVX2 static void avx2(Args... args) { Loop::run(args...); }
  static void portable(Args... args) { Loop::run(args...); }
};

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

// Of Loop's three compilations, the one for the ISA this process runs.
template <typename Loop>
auto* for_isa() {
  using Variants = Compiled<Loop>;
  if (kIsa == Isa::kAvx512) return &Variants::avx512;
  if (kIsa == Isa::kAvx2) return &Variants::avx2;
  return &Variants::portable;
}

// Runs task(begin, end) over [0, n): on this thread below kSplitBytes of input, else over
// torch's intra-op pool in tasks of at least kTaskBytes. torch::stable::parallel_for runs
// at::parallel_for inside libtorch, with torch's OpenMP: this file needs no -fopenmp.
template <typename Task>
void run_split(int64_t n, int64_t storage_bytes, const Task& task) {
  if (n < kSplitBytes / storage_bytes) {
    task(0, n);  // the common small call: no shim call at all
    return;
  }
  torch::stable::parallel_for(0, n, std::max<int64_t>(1, kTaskBytes / storage_bytes), task);
}

// Runs row over every element of `layout` (WalkRows), split like run_split.
template <int kOperands, typename RowFn>
void walk_layout(const StridedLayout& layout, int64_t storage_bytes, const RowFn& row) {
  auto* walk = for_isa<WalkRows<kOperands, RowFn>>();
  run_split(layout.numel(), storage_bytes,
            [&](int64_t begin, int64_t end) { walk(layout, begin, end, row); });
}

}  // namespace

std::string relu_cpu_isa() { return isa_name(kIsa); }

namespace {

template <Activation kActivation, typename Fmt>
void forward_strided(const typename Fmt::Storage* src, typename Fmt::Storage* dst,
                     const StridedLayout& layout) {
  using Storage = typename Fmt::Storage;
  const int64_t out_stride = layout.strides[0][0], in_stride = layout.strides[1][0];
  // Every row of a layout has the same strides: the row loop is chosen once.
  if (out_stride == 1 && in_stride >= 1 && in_stride <= 4) {
    const auto walk_stepped = [&](auto step) {
      walk_layout<2>(layout, sizeof(Storage),
                     Row<decltype(step)::value, Storage, 1, ForwardOp<kActivation, Fmt>>{{src}, dst});
    };
    switch (in_stride) {
      case 1: return walk_stepped(std::integral_constant<int, 1>{});
      case 2: return walk_stepped(std::integral_constant<int, 2>{});
      case 3: return walk_stepped(std::integral_constant<int, 3>{});
      default: return walk_stepped(std::integral_constant<int, 4>{});
    }
  }
  walk_layout<2>(layout, sizeof(Storage), Row<0, Storage, 1, ForwardOp<kActivation, Fmt, true>>{
                                              {src}, dst, {out_stride, in_stride}});
}

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
    walk(Row<1, Storage, kInputs, Fn>{{}, nullptr, {}, fn});
  } else {
    walk(Row<0, Storage, kInputs, Fn>{{}, nullptr, {}, fn});
  }
}

}  // namespace

template <>
void Backend<Device::kCpu>::forward(Activation activation, ScalarType dtype, const void* x,
                                    void* out, Walk walk, int32_t) {
  visit_forward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto* src = static_cast<const Storage*>(x);
    auto* dst = static_cast<Storage*>(out);
    if (walk.layout != nullptr) return forward_strided<kActivation, Fmt>(src, dst, *walk.layout);
    const auto dense = for_isa<DensePass<ForwardOp<kActivation, Fmt>, Storage>>();
    run_split(walk.n, sizeof(Storage),
              [&](int64_t begin, int64_t end) { dense(src + begin, dst + begin, end - begin); });
  });
}

template <>
void Backend<Device::kCpu>::backward(Activation activation, ScalarType dtype,
                                     const void* grad_out, const void* saved, void* grad_in,
                                     Walk walk, int32_t) {
  visit_backward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const auto* grad = static_cast<const Storage*>(grad_out);
    const auto* kept = static_cast<const Storage*>(saved);
    auto* dst = static_cast<Storage*>(grad_in);
    if (walk.layout == nullptr) {
      const auto dense = for_isa<DensePass<BackwardOp<kActivation, Fmt>, Storage, Storage>>();
      run_split(walk.n, sizeof(Storage), [&](int64_t begin, int64_t end) {
        dense(grad + begin, kept + begin, dst + begin, end - begin);
      });
      return;
    }
    const StridedLayout& layout = *walk.layout;
    const int64_t dst_stride = layout.strides[0][0], grad_stride = layout.strides[1][0],
                  saved_stride = layout.strides[2][0];
    if (dst_stride == 1 && grad_stride == 1 && saved_stride == 1) {
      walk_layout<3>(layout, sizeof(Storage),
                     Row<1, Storage, 2, BackwardOp<kActivation, Fmt>>{{grad, kept}, dst});
    } else {
      walk_layout<3>(layout, sizeof(Storage),
                     Row<0, Storage, 2, BackwardOp<kActivation, Fmt, true>>{
                         {grad, kept}, dst, {dst_stride, grad_stride, saved_stride}});
    }
  });
}

// fn(kGate, Fmt, layout, threshold in OpMath): a gated pass's types, over its walk as a layout.
template <typename Fn>
void visit_gated_walk(Gate gate, ScalarType dtype, Walk walk, double threshold, const Fn& fn) {
  if (walk.layout == nullptr) {  // a layout of 1 KiB is built only for a dense walk
    const StridedLayout dense = StridedLayout::dense(walk.n);
    return visit_gated_walk(gate, dtype, Walk{0, &dense}, threshold, fn);
  }
  visit_gated(gate, dtype, [&](auto gate_constant, auto fmt) {
    fn(gate_constant, fmt, *walk.layout, typename OpMath<decltype(fmt)>::Type(threshold));
  });
}

template <>
void Backend<Device::kCpu>::gated_forward(Gate gate, ScalarType dtype, const void* a,
                                          const void* b, void* out, Walk walk, double threshold,
                                          int32_t) {
  visit_gated_walk(gate, dtype, walk, threshold,
                   [&](auto gate_constant, auto fmt, const auto& layout, auto t) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const void* inputs[] = {a, b};
    run_map<2, Storage>(layout, inputs, out, [t](Storage av, Storage bv) {
      return gated_pass<kGate, GatedPassKind::kForward, Fmt>({av, bv}, t);
    });
  });
}

template <>
void Backend<Device::kCpu>::gated_backward(Gate gate, ScalarType dtype, const void* grad_out,
                                           const void* a, const void* b, void* grad_a,
                                           void* grad_b, Walk walk, double threshold, int32_t) {
  visit_gated_walk(gate, dtype, walk, threshold,
                   [&](auto gate_constant, auto fmt, const auto& layout, auto t) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    const void* a_inputs[] = {grad_out, a, b};
    run_map<3, Storage>(layout, a_inputs, grad_a, [t](Storage g, Storage av, Storage bv) {
      return gated_pass<kGate, GatedPassKind::kGradA, Fmt>({g, av, bv}, t);
    });
    const void* b_inputs[] = {grad_out, a};
    run_map<2, Storage>(layout, b_inputs, grad_b, [t](Storage g, Storage av) {
      return gated_pass<kGate, GatedPassKind::kGradB, Fmt>({g, av}, t);
    });
  });
}
