// CPU backend. Each element goes through relu_element (relu-common/relu_element.h), in a
// loop with no branch that the compiler vectorizes three times: for AVX-512, for AVX2 and
// for the baseline ISA (SSE2 on x86-64, NEON on aarch64). The variant is picked once, at
// load, from CPUID; RELU_CPU_ISA=avx512|avx2|portable caps it (tests run every variant).
// float16 and bfloat16 stay 16-bit in registers (bit operations on their patterns):
// nothing is converted to float.
#include <ATen/Parallel.h>
#include <torch/all.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "relu-common/relu_element.h"
#include "torch-ext/relu_dtypes.h"
#include "torch-ext/torch_binding.h"

namespace {

using namespace relu_kernel;

// Elements per parallel task, as bytes of input. Below this a tensor runs on the calling
// thread: waking the pool costs more than it saves. Chosen by measurement on the 2-core
// dev machine (PERFORMANCE.md, "CPU grain size").
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
#define RELU_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
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

// Runs body(begin, end) over [0, n) on the intra-op pool, in tasks of at least kGrainBytes.
template <typename Body>
void parallel_elements(int64_t n, int64_t element_size, const Body& body) {
  at::parallel_for(0, n, kGrainBytes / element_size, body);
}

}  // namespace

std::string relu_cpu_isa() { return isa_name(kIsa); }

void relu_flat_cpu(const at::Tensor& x, at::Tensor& out) {
  visit_format(x.scalar_type(), [&](auto fmt) {
    using Fmt = decltype(fmt);
    using Storage = typename Fmt::Storage;
    auto* span = &forward_portable<Fmt>;
#if defined(__x86_64__)
    if (kIsa == Isa::kAvx512) span = &forward_avx512<Fmt>;
    if (kIsa == Isa::kAvx2) span = &forward_avx2<Fmt>;
#endif
    const Storage* in = data_of<Fmt>(x);
    Storage* dst = mutable_data_of<Fmt>(out);
    parallel_elements(x.numel(), sizeof(Storage), [&](int64_t begin, int64_t end) {
      span(in + begin, dst + begin, end - begin);
    });
  });
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
    const Storage* grad = data_of<Fmt>(grad_out);
    const Storage* res = data_of<Fmt>(result);
    Storage* dst = mutable_data_of<Fmt>(grad_in);
    parallel_elements(result.numel(), sizeof(Storage), [&](int64_t begin, int64_t end) {
      span(grad + begin, res + begin, dst + begin, end - begin);
    });
  });
}
