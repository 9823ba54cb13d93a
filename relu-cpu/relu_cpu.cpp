// CPU backend. Each element goes through relu_element (relu-common/relu_element.h), in a
// loop with no branch that the compiler vectorizes three times: for AVX-512, for AVX2 and
// for the baseline ISA (SSE2 on x86-64, NEON on aarch64). The variant is picked once, at
// load, from CPUID; RELU_CPU_ISA=avx512|avx2|portable caps it (tests run every variant).
// float16 and bfloat16 stay 16-bit in registers (bit operations on their patterns):
// nothing is converted to float.
#include <ATen/Parallel.h>
#include <ATen/TensorIterator.h>
#include <torch/all.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>

#include "relu-common/relu_element.h"
#include "torch-ext/relu_dtypes.h"
#include "torch-ext/torch_binding.h"

namespace {

using namespace relu_kernel;

// Elements per parallel task, as bytes of input. Below this a tensor runs on the calling
// thread: waking the pool costs more than it saves. Measured on the 2-core dev machine
// (results/cpu/grain.json, `python benchmarks/grain.py`, PERFORMANCE.md "CPU grain size"):
// split over 2 threads vs. serial, hot buffers: 128 KiB 0.96x (float32) / 0.82x (int8),
// 256 KiB 1.15x / 1.14x, 512 KiB 1.53x / 1.42x. So 256 KiB, the first size that gains.
constexpr int64_t kGrainBytes = 256 * 1024;

template <typename Fmt>
__attribute__((always_inline)) inline void forward_span(const typename Fmt::Storage* in,
                                                        typename Fmt::Storage* out,
                                                        int64_t n) {
  // in == out (in place) is allowed: element i is read before it is written, and no
  // element depends on another, which is exactly what ivdep promises.
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) out[i] = relu_element<Fmt>(in[i]);
}

template <typename Fmt>
__attribute__((always_inline)) inline void backward_span(const typename Fmt::Storage* grad,
                                                         const typename Fmt::Storage* result,
                                                         typename Fmt::Storage* grad_in,
                                                         int64_t n) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) grad_in[i] = relu_backward_element<Fmt>(grad[i], result[i]);
}

enum class Isa { kPortable, kAvx2, kAvx512 };

#if defined(__x86_64__)
// AVX-512 instructions (masks, VL forms) on 256-bit vectors: on the dev machine's Zen 4 the
// 512-bit loop runs slower from cache than the 256-bit one (results/cpu/vector_width.json,
// `python benchmarks/vector_width.py`, PERFORMANCE.md); GCC's own tuning for Intel AVX-512
// parts prefers 256-bit vectors too. The macro exists for that study only.
#ifndef RELU_AVX512_VECTOR_BITS
#define RELU_AVX512_VECTOR_BITS "256"
#endif
#define RELU_TARGET_AVX512                                                 \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=" \
                        RELU_AVX512_VECTOR_BITS)))
#define RELU_TARGET_AVX2 __attribute__((target("avx2")))

template <typename Fmt>
RELU_TARGET_AVX512 void forward_avx512(const typename Fmt::Storage* in,
                                       typename Fmt::Storage* out, int64_t n) {
  forward_span<Fmt>(in, out, n);
}
template <typename Fmt>
RELU_TARGET_AVX2 void forward_avx2(const typename Fmt::Storage* in, typename Fmt::Storage* out,
                                   int64_t n) {
  forward_span<Fmt>(in, out, n);
}
template <typename Fmt>
RELU_TARGET_AVX512 void backward_avx512(const typename Fmt::Storage* grad,
                                        const typename Fmt::Storage* result,
                                        typename Fmt::Storage* grad_in, int64_t n) {
  backward_span<Fmt>(grad, result, grad_in, n);
}
template <typename Fmt>
RELU_TARGET_AVX2 void backward_avx2(const typename Fmt::Storage* grad,
                                    const typename Fmt::Storage* result,
                                    typename Fmt::Storage* grad_in, int64_t n) {
  backward_span<Fmt>(grad, result, grad_in, n);
}
#endif

template <typename Fmt>
void forward_portable(const typename Fmt::Storage* in, typename Fmt::Storage* out, int64_t n) {
  forward_span<Fmt>(in, out, n);
}
template <typename Fmt>
void backward_portable(const typename Fmt::Storage* grad, const typename Fmt::Storage* result,
                       typename Fmt::Storage* grad_in, int64_t n) {
  backward_span<Fmt>(grad, result, grad_in, n);
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
    TORCH_WARN("relu: ignoring RELU_CPU_ISA=", wanted, "; accepted: avx512, avx2, portable");
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

// Runs span over dense tensors of one layout (operands: outputs first, then inputs), split
// into tasks of at least grain_bytes over the intra-op pool; below one grain, on this thread.
// Why through TensorIterator::for_each and not at::parallel_for here: with torch's OpenMP
// backend at::parallel_for is a header template around `#pragma omp parallel`, so compiled
// into this file it runs serially unless the file gets -fopenmp, which neither
// scripts/build_variant.py nor kernel-builder promises (measured: built without it, the
// "split" runs of benchmarks/grain.py timed exactly like the serial ones, and the .so had
// no GOMP symbol). for_each's parallel_for is compiled inside libtorch, with OpenMP.
template <typename Storage, size_t kOperands, typename Span>
void run_split(const std::array<const at::Tensor*, kOperands>& operands, const Span& span,
               int64_t grain_bytes) {
  const int64_t n = operands[0]->numel();
  const int64_t grain = std::max<int64_t>(1, grain_bytes / static_cast<int64_t>(sizeof(Storage)));
  std::array<char*, kOperands> base;
  for (size_t i = 0; i < kOperands; ++i) base[i] = static_cast<char*>(operands[i]->data_ptr());
  if (n < grain || at::get_num_threads() == 1 || at::in_parallel_region()) {
    span(base.data(), n);
    return;
  }
  // The operands are dense with one layout, so TensorIterator orders their dimensions by
  // stride and merges them into one: every chunk it hands out is contiguous (asserted).
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).check_all_same_dtype(false).resize_outputs(false);
  config.add_output(*operands[0]);
  for (size_t i = 1; i < kOperands; ++i) config.add_const_input(*operands[i]);
  at::TensorIterator iter = config.build();
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t size) {
        for (size_t i = 0; i < kOperands; ++i) {
          TORCH_INTERNAL_ASSERT(strides[i] == static_cast<int64_t>(sizeof(Storage)));
        }
        span(data, size);
      },
      grain);
}

// relu_flat_cpu with the task size as a parameter: benchmarks/grain.py compiles this file
// into an extension of its own and calls this to measure kGrainBytes.
void relu_flat_cpu_with_grain(const at::Tensor& x, at::Tensor& out, int64_t grain_bytes) {
  visit_format(x.scalar_type(), [&](auto fmt) {
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    auto* span = &forward_portable<Fmt>;
#if defined(__x86_64__)
    if (kIsa == Isa::kAvx512) span = &forward_avx512<Fmt>;
    if (kIsa == Isa::kAvx2) span = &forward_avx2<Fmt>;
#endif
    run_split<Storage, 2>(
        {&out, &x},
        [&](char** data, int64_t n) {
          span(reinterpret_cast<const Storage*>(data[1]), reinterpret_cast<Storage*>(data[0]), n);
        },
        grain_bytes);
  });
}

}  // namespace

std::string relu_cpu_isa() { return isa_name(kIsa); }

void relu_flat_cpu(const at::Tensor& x, at::Tensor& out) {
  relu_flat_cpu_with_grain(x, out, kGrainBytes);
}

void relu_backward_flat_cpu(const at::Tensor& grad_out, const at::Tensor& result,
                            at::Tensor& grad_in) {
  visit_format(result.scalar_type(), [&](auto fmt) {
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    auto* span = &backward_portable<Fmt>;
#if defined(__x86_64__)
    if (kIsa == Isa::kAvx512) span = &backward_avx512<Fmt>;
    if (kIsa == Isa::kAvx2) span = &backward_avx2<Fmt>;
#endif
    run_split<Storage, 3>(
        {&grad_in, &grad_out, &result},
        [&](char** data, int64_t n) {
          span(reinterpret_cast<const Storage*>(data[1]), reinterpret_cast<const Storage*>(data[2]),
               reinterpret_cast<Storage*>(data[0]), n);
        },
        kGrainBytes);
  });
}
