// CPU backend. Each element goes through relu_element (relu-common/relu_element.h), in a
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

// Runs span(begin, end) over [0, n), split into tasks of at least grain_bytes over torch's
// intra-op pool; below one grain, on this thread. torch::stable::parallel_for calls
// at::parallel_for inside libtorch, compiled with torch's OpenMP: this file needs no
// -fopenmp (at::parallel_for compiled here without it silently ran serially, measured with
// benchmarks/grain.py on the full-ABI build).
template <typename Span>
void run_split(int64_t n, int64_t element_bytes, int64_t grain_bytes, const Span& span) {
  const int64_t grain = std::max<int64_t>(1, grain_bytes / element_bytes);
  if (n < grain) {
    span(0, n);  // the common small call: no shim call at all
    return;
  }
  torch::stable::parallel_for(0, n, grain, span);
}

// relu_flat_cpu with the task size as a parameter: benchmarks/grain.py compiles this file
// into an extension of its own and calls this to measure kGrainBytes.
void relu_flat_cpu_with_grain(ScalarType dtype, const void* in, void* out, int64_t n,
                              int64_t grain_bytes) {
  visit_format(dtype, [&](auto fmt) {
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    auto* span = &forward_portable<Fmt>;
#if defined(__x86_64__)
    if (kIsa == Isa::kAvx512) span = &forward_avx512<Fmt>;
    if (kIsa == Isa::kAvx2) span = &forward_avx2<Fmt>;
#endif
    const auto* src = static_cast<const Storage*>(in);
    auto* dst = static_cast<Storage*>(out);
    run_split(n, sizeof(Storage), grain_bytes,
              [&](int64_t begin, int64_t end) { span(src + begin, dst + begin, end - begin); });
  });
}

}  // namespace

std::string relu_cpu_isa() { return isa_name(kIsa); }

void relu_flat_cpu(ScalarType dtype, const void* in, void* out, int64_t n) {
  relu_flat_cpu_with_grain(dtype, in, out, n, kGrainBytes);
}

void relu_backward_flat_cpu(ScalarType dtype, const void* grad_out, const void* result,
                            void* grad_in, int64_t n) {
  visit_format(dtype, [&](auto fmt) {
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    auto* span = &backward_portable<Fmt>;
#if defined(__x86_64__)
    if (kIsa == Isa::kAvx512) span = &backward_avx512<Fmt>;
    if (kIsa == Isa::kAvx2) span = &backward_avx2<Fmt>;
#endif
    const auto* grad = static_cast<const Storage*>(grad_out);
    const auto* res = static_cast<const Storage*>(result);
    auto* dst = static_cast<Storage*>(grad_in);
    run_split(n, sizeof(Storage), kGrainBytes, [&](int64_t begin, int64_t end) {
      span(grad + begin, res + begin, dst + begin, end - begin);
    });
  });
}
