// The two operations every CUDA kernel applies, as tiny functors over relu_element.h, and the
// operands of one pass. Shared by the dense kernels (relu_cuda.cu) and the strided ones
// (strided.cuh), which differ only in where the elements are.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "relu-common/relu_element.h"
#include "relu-cuda/memory.cuh"

namespace relu_kernel {

// relu_vector16 for the GPU: float16 and bfloat16 pairs through max(x, +0) (HMNMX2) on sm_80
// and later, whose max returns the non-NaN operand and orders -0.0 below +0.0 (cuda_fp16.h,
// cuda_bf16.h), so NaN -> +0 and -0.0 -> +0.0 as relu_element.h; 4 instructions per vector
// instead of the bit form's 36. Older GPUs and every other format keep relu_vector16.
template <typename Pair>
__device__ __forceinline__ Vector16<uint32_t> relu_pairs_by_max(Vector16<uint32_t> v) {
  static_assert(sizeof(Pair) == sizeof(uint32_t), "one pair per 32-bit word");
  const Pair zero{};
#pragma unroll
  for (int i = 0; i < Vector16<uint32_t>::kWords; ++i) {
    Pair pair;
    memcpy(&pair, &v.words[i], sizeof(pair));
    pair = __hmax2(pair, zero);
    memcpy(&v.words[i], &pair, sizeof(pair));
  }
  return v;
}

template <typename Fmt>
__device__ __forceinline__ Vector16<typename Fmt::Word> relu_vector16_gpu(
    Vector16<typename Fmt::Word> v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same<Fmt, Float16Format>::value) {
    return relu_pairs_by_max<__half2>(v);
  } else if constexpr (std::is_same<Fmt, BFloat16Format>::value) {
    return relu_pairs_by_max<__nv_bfloat162>(v);
  }
#endif
  return relu_vector16<Fmt>(v);
}

// The operands of one pass: kInputs input streams and one output, all of `n` elements of
// Fmt. For the forward pass in[0] = x; for the backward pass in = {grad_out, result}.
template <typename Fmt, int kInputs>
struct Pass {
  using Storage = typename Fmt::Storage;
  const Storage* in[kInputs];
  Storage* out;
  int64_t n;
};

// Each op computes one output from its inputs in three forms: a 16-byte vector of each input
// (vector), the loaded values of one element (value), one element of dense inputs (element).
template <typename Fmt>
struct ForwardOp {
  using Format = Fmt;
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 1;
  static constexpr const char* kOperandNames[] = {"out", "x"};  // out first, as in a walk
  static __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[1]) {
    using Word = typename Fmt::Word;
    return as_words<uint32_t>(relu_vector16_gpu<Fmt>(as_words<Word>(in[0])));
  }
  static __device__ __forceinline__ Storage value(const Storage (&in)[1]) {
    return relu_element<Fmt>(in[0]);
  }
  static __device__ __forceinline__ Storage element(const Storage* const (&in)[1], int64_t i) {
    return value({in[0][i]});
  }
};

template <typename Fmt>
struct BackwardOp {
  using Format = Fmt;
  using Storage = typename Fmt::Storage;
  static constexpr int kInputs = 2;
  static constexpr const char* kOperandNames[] = {"grad_in", "grad_out", "result"};
  static __device__ __forceinline__ Vector16<uint32_t> vector(const Vector16<uint32_t> (&in)[2]) {
    using Word = typename Fmt::Word;
    return as_words<uint32_t>(
        relu_backward_vector16<Fmt>(as_words<Word>(in[0]), as_words<Word>(in[1])));
  }
  static __device__ __forceinline__ Storage value(const Storage (&in)[2]) {
    return relu_backward_element<Fmt>(in[0], in[1]);
  }
  static __device__ __forceinline__ Storage element(const Storage* const (&in)[2], int64_t i) {
    return value({in[0][i], in[1][i]});
  }
};

// Every operand's address is a multiple of its element size (relu-common/vector16.h).
template <typename Op>
void require_element_aligned(const Pass<typename Op::Format, Op::kInputs>& pass) {
  constexpr int kElementBytes = int(sizeof(typename Op::Storage));
  require_element_aligned(pass.out, kElementBytes, Op::kOperandNames[0]);
  for (int k = 0; k < Op::kInputs; ++k) {
    require_element_aligned(pass.in[k], kElementBytes, Op::kOperandNames[1 + k]);
  }
}

}  // namespace relu_kernel
