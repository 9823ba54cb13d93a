// The L2-band study's own kernel variants (l2_band.py drives them; README.md beside this says
// why). A plain shared library with extern "C" launchers: no torch, no product .cu. It shares
// with the product only the headers made to be shared, the element function
// (relu-common/relu_element.h) and the 16-byte access primitives (relu-cuda/memory.cuh), so
// that every difference timed here is a launch or loop-shape difference, not a semantic one.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fPIC -shared -I<repo root>
//        benchmarks/studies/l2_band/l2_band_kernels.cu -o libl2_band.so
//
// Every variant is one row of kVariants (the grid of the study, in one place): the dimensions
// are the ones the product's dense kernel fixes (relu-cuda/relu_cuda.cu, launch_policy.h) and
// the ones a plain Triton ReLU differs in (one tile per program, no loop, 32-bit offsets,
// BLOCK / (32 * num_warps) elements per thread as 16-byte accesses, a mask on the last tile).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

#include "relu-common/relu_element.h"
#include "relu-cuda/memory.cuh"
#include "relu-cuda/relu_ops.cuh"  // relu_vector16_gpu: float16/bfloat16 through __hmax2 (sm_80+)

namespace l2_band {

using relu_kernel::CacheHint;
using Vector16 = relu_kernel::Vector16<uint32_t>;  // as the product's kernels move it

// What a vector becomes: relu_vector16 (the bit form for float16/bfloat16), nothing (a copy
// kernel of the same shape, to tell the element function's cost from the launch's), or
// relu_vector16_gpu (relu_ops.cuh: __hmax2 for float16/bfloat16, relu_vector16 for the rest).
enum class Body { kRelu, kCopy, kReluMax };

// The product's 16-byte load (memory.cuh), which takes the runtime's uint4 address.
template <CacheHint kHint>
__device__ __forceinline__ Vector16 load_vector16(const Vector16* address) {
  return relu_kernel::load_vector16<kHint>(reinterpret_cast<const uint4*>(address));
}
// Index arithmetic of the vector loop: 64-bit (the product) or 32-bit (Triton's offsets).
enum class Index { k64, k32 };
// The grid: one tile per block, no loop (Triton), or a grid-stride loop over a grid that the
// launcher may cap at a number of blocks per SM (the product loops, uncapped).
// kLean: Triton's straight line: one tile per block, every vector's load and store predicated
// on its own bound, no whole-tile branch and no early exit before the loads.
enum class Loop { kOneTile, kGridStride, kLean };
// Where the scalar head and tail go (elements before the first and after the last whole
// vector): block 0 before the vectors (the first runs' product), the last block, a separate
// kernel launched only when there is a head or a tail (never for the study's aligned
// power-of-two sizes), or block 0 after the vectors (the product's tile forms since the
// second run).
enum class Tail { kBlockZero, kLastBlock, kSeparate, kBlockZeroAfter };

enum Dtype : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2, kInt8 = 3 };

template <typename Fmt, Body kBody>
__device__ __forceinline__ Vector16 apply(Vector16 v) {
  if constexpr (kBody == Body::kCopy) {
    return v;
  } else if constexpr (kBody == Body::kReluMax) {
    return relu_kernel::as_words<uint32_t>(
        relu_kernel::relu_vector16_gpu<Fmt>(relu_kernel::as_words<typename Fmt::Word>(v)));
  } else {
    return relu_kernel::as_words<uint32_t>(
        relu_kernel::relu_vector16<Fmt>(relu_kernel::as_words<typename Fmt::Word>(v)));
  }
}

template <typename Fmt, Body kBody>
__device__ __forceinline__ typename Fmt::Storage apply_element(typename Fmt::Storage x) {
  if constexpr (kBody == Body::kCopy) {
    return x;
  } else {
    return relu_kernel::relu_element<Fmt>(x);
  }
}

template <typename Fmt, Body kBody>
__device__ __forceinline__ void head_and_tail(const typename Fmt::Storage* in,
                                              typename Fmt::Storage* out,
                                              relu_kernel::VectorSplit split, int64_t t) {
  if (t < split.head) {
    out[t] = apply_element<Fmt, kBody>(in[t]);
  } else if (t - split.head < split.tail) {
    const int64_t i = split.tail_start + (t - split.head);
    out[i] = apply_element<Fmt, kBody>(in[i]);
  }
}

// One tile: each thread moves kVectors 16-byte vectors, spaced one block apart (coalesced, as
// the product's loop and Triton's blocked layout), all loads issued before any store.
template <typename Fmt, Body kBody, int kVectors, CacheHint kLoad, CacheHint kStore, typename I>
__device__ __forceinline__ void move_tile(const Vector16* in, Vector16* out, I base, I n) {
  const I threads = I(blockDim.x);
  const I first = base + I(threadIdx.x);
  Vector16 v[kVectors];
  if (base + threads * kVectors <= n) {
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      v[j] = load_vector16<kLoad>(in + first + I(j) * threads);
    }
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      relu_kernel::store_vector16<kStore>(out + first + I(j) * threads, apply<Fmt, kBody>(v[j]));
    }
  } else {  // the last, partial tile: masked, as Triton's last program
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const I i = first + I(j) * threads;
      if (i < n) v[j] = load_vector16<kLoad>(in + i);
    }
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const I i = first + I(j) * threads;
      if (i < n) relu_kernel::store_vector16<kStore>(out + i, apply<Fmt, kBody>(v[j]));
    }
  }
}

template <typename Fmt, Body kBody, int kVectors, CacheHint kLoad, CacheHint kStore, Index kIndex,
          Loop kLoop, Tail kTail>
__global__ void vector_kernel(const typename Fmt::Storage* in_elements,
                              typename Fmt::Storage* out_elements,
                              relu_kernel::VectorSplit split) {
  using I = typename std::conditional<kIndex == Index::k64, int64_t, int32_t>::type;
  if constexpr (kTail == Tail::kBlockZero) {
    if (blockIdx.x == 0) head_and_tail<Fmt, kBody>(in_elements, out_elements, split, threadIdx.x);
  } else if constexpr (kTail == Tail::kLastBlock) {
    if (blockIdx.x == gridDim.x - 1) {
      head_and_tail<Fmt, kBody>(in_elements, out_elements, split, threadIdx.x);
    }
  }
  const Vector16* in = reinterpret_cast<const Vector16*>(in_elements + split.head);
  Vector16* out = reinterpret_cast<Vector16*>(out_elements + split.head);
  const I n = I(split.vectors);
  const I tile = I(blockDim.x) * kVectors;
  if constexpr (kLoop == Loop::kLean) {
    const I first = I(blockIdx.x) * tile + I(threadIdx.x);
    const I threads = I(blockDim.x);
    Vector16 v[kVectors];
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      if (first + I(j) * threads < n) v[j] = load_vector16<kLoad>(in + first + I(j) * threads);
    }
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      if (first + I(j) * threads < n) {
        relu_kernel::store_vector16<kStore>(out + first + I(j) * threads, apply<Fmt, kBody>(v[j]));
      }
    }
  } else if constexpr (kLoop == Loop::kOneTile) {
    const I base = I(blockIdx.x) * tile;
    if (base < n) move_tile<Fmt, kBody, kVectors, kLoad, kStore>(in, out, base, n);
  } else {
    for (I base = I(blockIdx.x) * tile; base < n; base += I(gridDim.x) * tile) {
      move_tile<Fmt, kBody, kVectors, kLoad, kStore>(in, out, base, n);
    }
  }
  if constexpr (kTail == Tail::kBlockZeroAfter) {
    if (blockIdx.x == 0) head_and_tail<Fmt, kBody>(in_elements, out_elements, split, threadIdx.x);
  }
}

template <typename Fmt, Body kBody>
__global__ void head_tail_kernel(const typename Fmt::Storage* in, typename Fmt::Storage* out,
                                 relu_kernel::VectorSplit split) {
  head_and_tail<Fmt, kBody>(in, out, split, threadIdx.x);
}

// Threads per block: a fixed count, or the product's rule (launch_policy.h: 256, and 128 when
// 256-thread blocks would not reach every SM once).
constexpr int kProductThreads = 0;

struct Launch {
  int threads;         // per block, or kProductThreads
  int blocks_per_sm;   // grid-stride variants: cap the grid at this many blocks per SM (0: none)
};

using Launcher = int (*)(const void* in, void* out, int64_t n, const Launch& launch,
                         cudaStream_t stream);

int sm_count() {
  static int count = [] {
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
      return 0;
    }
    return sms;
  }();
  return count;
}

constexpr int kErrorBadArguments = -1;

template <typename Fmt, Body kBody, int kVectors, CacheHint kLoad, CacheHint kStore, Index kIndex,
          Loop kLoop, Tail kTail>
int launch_vector(const void* in_ptr, void* out_ptr, int64_t n, const Launch& launch,
                  cudaStream_t stream) {
  using Storage = typename Fmt::Storage;
  const auto* in = static_cast<const Storage*>(in_ptr);
  auto* out = static_cast<Storage*>(out_ptr);
  const int misalignment = relu_kernel::misalignment16(out);
  if (relu_kernel::misalignment16(in) != misalignment || n < 0) return kErrorBadArguments;
  const relu_kernel::VectorSplit split =
      relu_kernel::split_for_vectors(n, misalignment, int(sizeof(Storage)));
  if (kIndex == Index::k32 && split.vectors > (int64_t(1) << 30)) {
    return kErrorBadArguments;  // 32-bit offsets (base + grid step < 2^31): the study's sizes
  }
  const int sms = sm_count();
  if (sms <= 0) return int(cudaErrorNoDevice);
  int threads = launch.threads;
  if (threads == kProductThreads) threads = split.vectors < int64_t(sms) * 256 ? 128 : 256;
  const int64_t tile = int64_t(threads) * kVectors;
  int64_t blocks = (split.vectors + tile - 1) / tile;
  if (blocks < 1) blocks = 1;
  if (kLoop == Loop::kGridStride && launch.blocks_per_sm > 0 &&
      blocks > int64_t(launch.blocks_per_sm) * sms) {
    blocks = int64_t(launch.blocks_per_sm) * sms;
  }
  if (blocks > INT32_MAX) return kErrorBadArguments;
  vector_kernel<Fmt, kBody, kVectors, kLoad, kStore, kIndex, kLoop, kTail>
      <<<unsigned(blocks), unsigned(threads), 0, stream>>>(in, out, split);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) return int(status);
  if (kTail == Tail::kSeparate && split.head + split.tail > 0) {
    head_tail_kernel<Fmt, kBody><<<1, 32, 0, stream>>>(in, out, split);
    status = cudaGetLastError();
  }
  return int(status);
}

// One variant for every dtype of the study.
struct Variant {
  const char* name;
  Launch launch;
  Launcher by_dtype[4];
};

template <Body kBody, int kVectors, CacheHint kLoad, CacheHint kStore, Index kIndex, Loop kLoop,
          Tail kTail>
constexpr Variant variant(const char* name, Launch launch) {
  return Variant{name,
                 launch,
                 {&launch_vector<relu_kernel::Float32Format, kBody, kVectors, kLoad, kStore,
                                 kIndex, kLoop, kTail>,
                  &launch_vector<relu_kernel::Float16Format, kBody, kVectors, kLoad, kStore,
                                 kIndex, kLoop, kTail>,
                  &launch_vector<relu_kernel::BFloat16Format, kBody, kVectors, kLoad, kStore,
                                 kIndex, kLoop, kTail>,
                  &launch_vector<relu_kernel::Int8Format, kBody, kVectors, kLoad, kStore,
                                 kIndex, kLoop, kTail>}};
}

constexpr CacheHint kDefault = CacheHint::kDefault;
constexpr CacheHint kStreaming = CacheHint::kStreaming;
constexpr Body R = Body::kRelu;
constexpr Body C = Body::kCopy;
constexpr Body M = Body::kReluMax;
constexpr Index I64 = Index::k64;
constexpr Index I32 = Index::k32;
constexpr Loop kStride = Loop::kGridStride;
constexpr Loop kTile = Loop::kOneTile;
constexpr Loop kLean = Loop::kLean;

// The grid. Names: v<vectors per thread> t<threads or "P" for the product's rule>, then what
// differs from the product's kernel. "product" is the product's dense forward kernel rebuilt
// here (64-bit grid-stride loop, uncapped, head/tail in block 0, default hints below 3/4 of
// the L2 where every size of the band lies); l2_band.py times it beside the product's own op
// to show that the rebuild is faithful.
const Variant kVariants[] = {
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product", {kProductThreads, 0}),
    // One change each from the product.
    variant<R, 1, kDefault, kDefault, I32, kStride, Tail::kBlockZero>("product idx32", {kProductThreads, 0}),
    variant<R, 1, kDefault, kDefault, I64, kTile, Tail::kBlockZero>("product one-tile", {kProductThreads, 0}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kLastBlock>("product tail-last", {kProductThreads, 0}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kSeparate>("product tail-separate", {kProductThreads, 0}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product t128", {128, 0}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product t256", {256, 0}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product t512", {512, 0}),
    variant<R, 2, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product v2", {kProductThreads, 0}),
    variant<R, 4, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product v4", {kProductThreads, 0}),
    variant<R, 8, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product v8", {kProductThreads, 0}),
    variant<R, 1, kStreaming, kStreaming, I64, kStride, Tail::kBlockZero>("product ldcs+stcs", {kProductThreads, 0}),
    variant<R, 1, kStreaming, kDefault, I64, kStride, Tail::kBlockZero>("product ldcs", {kProductThreads, 0}),
    variant<R, 1, kDefault, kStreaming, I64, kStride, Tail::kBlockZero>("product stcs", {kProductThreads, 0}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product grid 2/SM", {256, 2}),
    variant<R, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product grid 8/SM", {256, 8}),
    variant<R, 4, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("product v4 grid 4/SM", {256, 4}),
    // The same element function in Triton's shape: one tile per block, 32-bit offsets, the
    // head and tail apart. BLOCK 1024/2048/4096 x 4/8 warps is v1..v8 at t128/t256 in bytes
    // for float32 (BLOCK * 4 / 16 / threads vectors per thread); 2-byte and 1-byte dtypes
    // take fewer vectors per Triton BLOCK, so the grid spans v1..v8 for all.
    variant<R, 1, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v1 t128", {128, 0}),
    variant<R, 1, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v1 t256", {256, 0}),
    variant<R, 1, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v1 t512", {512, 0}),
    variant<R, 2, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v2 t128", {128, 0}),
    variant<R, 2, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v2 t256", {256, 0}),
    variant<R, 2, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v2 t512", {512, 0}),
    variant<R, 4, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v4 t128", {128, 0}),
    variant<R, 4, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v4 t256", {256, 0}),
    variant<R, 4, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v4 t512", {512, 0}),
    variant<R, 8, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v8 t128", {128, 0}),
    variant<R, 8, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v8 t256", {256, 0}),
    variant<R, 2, kStreaming, kStreaming, I32, kTile, Tail::kSeparate>("tile v2 t256 ldcs+stcs", {256, 0}),
    // Copies of the same shapes: the element function's share of the time.
    variant<C, 1, kDefault, kDefault, I64, kStride, Tail::kBlockZero>("copy product", {kProductThreads, 0}),
    variant<C, 2, kDefault, kDefault, I32, kTile, Tail::kSeparate>("copy tile v2 t256", {256, 0}),
    variant<C, 4, kDefault, kDefault, I32, kTile, Tail::kSeparate>("copy tile v4 t256", {256, 0}),
    // Second run: the product's new tile form (relu_cuda.cu: one tile per block, 2 x 128,
    // 64-bit, head/tail in block 0) with and without __hmax2, and Triton's straight line.
    variant<R, 2, kDefault, kDefault, I64, kTile, Tail::kBlockZero>("band v2 t128", {128, 0}),
    variant<M, 2, kDefault, kDefault, I64, kTile, Tail::kBlockZero>("band v2 t128 hmax2", {128, 0}),
    variant<M, 2, kDefault, kDefault, I32, kTile, Tail::kSeparate>("tile v2 t128 hmax2", {128, 0}),
    variant<R, 1, kDefault, kDefault, I32, kLean, Tail::kSeparate>("lean v1 t256", {256, 0}),
    variant<M, 1, kDefault, kDefault, I32, kLean, Tail::kSeparate>("lean v1 t256 hmax2", {256, 0}),
    variant<R, 2, kDefault, kDefault, I32, kLean, Tail::kSeparate>("lean v2 t128", {128, 0}),
    variant<M, 2, kDefault, kDefault, I32, kLean, Tail::kSeparate>("lean v2 t128 hmax2", {128, 0}),
    variant<C, 1, kDefault, kDefault, I32, kLean, Tail::kSeparate>("copy lean v1 t256", {256, 0}),
    variant<C, 2, kDefault, kDefault, I32, kLean, Tail::kSeparate>("copy lean v2 t128", {128, 0}),
    // Third run: the product's tile forms since the second run (relu_cuda.cu: straight line,
    // 32-bit, block 0's head and tail after the vectors; 1 x 256 within one wave, else 2 x 128).
    variant<M, 1, kDefault, kDefault, I32, kLean, Tail::kBlockZeroAfter>("lean v1 t256 hmax2 tail-after", {256, 0}),
    variant<M, 2, kDefault, kDefault, I32, kLean, Tail::kBlockZeroAfter>("lean v2 t128 hmax2 tail-after", {128, 0}),
};

constexpr int kVariantCount = int(sizeof(kVariants) / sizeof(kVariants[0]));

}  // namespace l2_band

extern "C" {

int l2_band_variant_count() { return l2_band::kVariantCount; }

const char* l2_band_variant_name(int variant) {
  if (variant < 0 || variant >= l2_band::kVariantCount) return nullptr;
  return l2_band::kVariants[variant].name;
}

// 1 when the variant is a copy (no ReLU): its output is x, not relu(x).
int l2_band_variant_is_copy(int variant) {
  if (variant < 0 || variant >= l2_band::kVariantCount) return -1;
  return std::strncmp(l2_band::kVariants[variant].name, "copy", 4) == 0 ? 1 : 0;
}

// Launches variant `variant` on `n` elements of dtype `dtype` (l2_band::Dtype) from `in` to
// `out` on `stream`. 0 on success, a cudaError_t, or -1 for arguments the variant cannot take.
int l2_band_launch(int variant, int dtype, const void* in, void* out, int64_t n, void* stream) {
  if (variant < 0 || variant >= l2_band::kVariantCount || dtype < 0 || dtype > 3) {
    return l2_band::kErrorBadArguments;
  }
  const l2_band::Variant& v = l2_band::kVariants[variant];
  return v.by_dtype[dtype](in, out, n, v.launch, static_cast<cudaStream_t>(stream));
}

const char* l2_band_error_string(int status) {
  if (status == l2_band::kErrorBadArguments) return "arguments this variant cannot take";
  return cudaGetErrorString(static_cast<cudaError_t>(status));
}

}  // extern "C"
