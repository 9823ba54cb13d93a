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

// relu_word16 for the GPU: float16 and bfloat16 pairs through max(x, +0) (HMNMX2) on sm_80 and
// later, whose max returns the non-NaN operand and orders -0.0 below +0.0 (cuda_fp16.h,
// cuda_bf16.h), so NaN -> +0 and -0.0 -> +0.0 as relu_element.h; 4 instructions per vector
// instead of the bit form's 36. Older GPUs and every other format keep relu_word16.
template <typename Fmt, typename Pair>
__device__ __forceinline__ Word16<Fmt> relu_pairs_by_max(Word16<Fmt> v) {
  static_assert(sizeof(Pair) == sizeof(typename Fmt::Word), "one pair per 32-bit word");
  const Pair zero{};
#pragma unroll
  for (int i = 0; i < Word16<Fmt>::kWords; ++i) {
    Pair pair;
    memcpy(&pair, &v.words[i], sizeof(pair));
    pair = __hmax2(pair, zero);
    memcpy(&v.words[i], &pair, sizeof(pair));
  }
  return v;
}

template <typename Fmt>
__device__ __forceinline__ Word16<Fmt> relu_word16_gpu(Word16<Fmt> v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same<Fmt, Float16Format>::value) {
    return relu_pairs_by_max<Fmt, __half2>(v);
  } else if constexpr (std::is_same<Fmt, BFloat16Format>::value) {
    return relu_pairs_by_max<Fmt, __nv_bfloat162>(v);
  }
#endif
  return relu_word16<Fmt>(v);
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
  static __device__ __forceinline__ Vector16 vector(const Vector16 (&in)[1]) {
    return as_vector16<Fmt>(relu_word16_gpu<Fmt>(as_word16<Fmt>(in[0])));
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
  static __device__ __forceinline__ Vector16 vector(const Vector16 (&in)[2]) {
    return as_vector16<Fmt>(
        relu_backward_word16<Fmt>(as_word16<Fmt>(in[0]), as_word16<Fmt>(in[1])));
  }
  static __device__ __forceinline__ Storage value(const Storage (&in)[2]) {
    return relu_backward_element<Fmt>(in[0], in[1]);
  }
  static __device__ __forceinline__ Storage element(const Storage* const (&in)[2], int64_t i) {
    return value({in[0][i], in[1][i]});
  }
};

// Every operand's address is a multiple of its element size (a torch allocation's always is):
// the kernels' offsets count elements, and the vectors' head and tail whole elements.
template <typename Fmt, int kInputs>
void require_element_aligned(const Pass<Fmt, kInputs>& pass) {
  constexpr int kElementBytes = int(sizeof(typename Fmt::Storage));
  if (!is_element_aligned(pass.out, kElementBytes)) {
    throw std::invalid_argument("relu: the output's address is not a multiple of its element "
                                "size; pass a tensor from a torch allocation");
  }
  for (int k = 0; k < kInputs; ++k) {
    if (!is_element_aligned(pass.in[k], kElementBytes)) {
      throw std::invalid_argument("relu: an input's address is not a multiple of its element "
                                  "size; pass a tensor from a torch allocation");
    }
  }
}

}  // namespace relu_kernel
