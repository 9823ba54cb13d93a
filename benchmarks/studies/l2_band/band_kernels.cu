// The L2-band tuning study's kernels (band.py drives them): a plain shared library with
// extern "C" launchers, no torch, no product .cu. It shares with the product only the element
// function (relu_ops.cuh's relu_word16_gpu over relu-common/relu_element.h), so that what is
// timed here differs from the product's dense tile only in launch shape and kernel code.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -cudart static -Xcompiler -fPIC -shared -I<repo root>
//        benchmarks/studies/l2_band/band_kernels.cu -o libband.so
//
// Families (the question each answers):
//   "tile t<T> v<V>"     the leanest tile: T threads as a compile-time constant
//                        (__launch_bounds__), V 16-byte vectors per thread spaced T apart,
//                        pointers offset to the first whole vector on the host, 32-bit
//                        offsets, every access predicated, no head/tail in the kernel: the
//                        SASS of a plain Triton ReLU of the same shape. Which shape wins
//                        where?
//   "tile ... l2pf"      the same with ld.global.L2::256B (the L2 fetches 256-byte blocks
//                        on a miss): does a larger DRAM request shorten cold calls?
//   "product t<T> v<V>"  the product's tile as it is (a Pass and a VectorSplit by value,
//                        blockDim read at run time, 64-bit head offset, block 0's head and
//                        tail after the vectors): what its code costs against "tile".
//   "copy t<T> v<V>"     "tile" without the element function: what relu costs.
//   "empty"              one block that does nothing: the floor of a kernel in a graph.
#include <cstdint>
#include <cstring>

#include <cuda_runtime.h>

#include "relu-common/relu_element.h"
#include "relu-cuda/memory.cuh"
#include "relu-cuda/relu_ops.cuh"

namespace band {

using Vector16 = uint4;  // the runtime's 16-byte type: plain LDG.E.128 / STG.E.128

enum Dtype : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2, kInt8 = 3 };
enum class Kind { kTile, kTileL2Prefetch, kProduct, kCopy };

template <typename Fmt, bool kCopy>
__device__ __forceinline__ Vector16 apply(Vector16 v) {
  if constexpr (kCopy) {
    return v;
  } else {
    using Words = relu_kernel::Vector16<uint32_t>;
    const Words w = relu_kernel::as_words<uint32_t>(relu_kernel::relu_vector16_gpu<Fmt>(
        relu_kernel::as_words<typename Fmt::Word>(Words{{v.x, v.y, v.z, v.w}})));
    return uint4{w.words[0], w.words[1], w.words[2], w.words[3]};
  }
}

template <bool kPrefetch>
__device__ __forceinline__ Vector16 load(const Vector16* p) {
  if constexpr (kPrefetch) {
    Vector16 v;
    asm volatile("ld.global.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  } else {
    return *p;
  }
}

template <typename Fmt, int kThreads, int kVectors, bool kCopy, bool kPrefetch>
__global__ void __launch_bounds__(kThreads) tile_kernel(const Vector16* in, Vector16* out, int32_t n) {
  const int32_t first = int32_t(blockIdx.x) * (kThreads * kVectors) + int32_t(threadIdx.x);
  Vector16 v[kVectors];
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * kThreads < n) v[j] = load<kPrefetch>(in + first + j * kThreads);
  }
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * kThreads < n) out[first + j * kThreads] = apply<Fmt, kCopy>(v[j]);
  }
}

// The product's elementwise_vector16_tile (relu-cuda/relu_cuda.cu at 4f2ef0b) written out with
// the same parameters and order of work, for an aligned pair (no shifted input).
template <typename Fmt, int kVectors>
__global__ void product_kernel(relu_kernel::Operands<typename Fmt::Storage, 1> pass,
                               relu_kernel::VectorSplit split) {
  const Vector16* in = reinterpret_cast<const Vector16*>(pass.in[0] + split.head);
  Vector16* out = reinterpret_cast<Vector16*>(pass.out + split.head);
  const int32_t n = int32_t(split.vectors);
  const int32_t threads = int32_t(blockDim.x);
  const int32_t first = int32_t(blockIdx.x) * threads * kVectors + int32_t(threadIdx.x);
  Vector16 v[kVectors];
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * threads < n) v[j] = in[first + j * threads];
  }
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * threads < n) out[first + j * threads] = apply<Fmt, false>(v[j]);
  }
  if (blockIdx.x != 0) return;
  const int64_t t = threadIdx.x;
  if (t < split.head) {
    pass.out[t] = relu_kernel::relu_forward<Fmt>(pass.in[0][t]);
  } else if (t - split.head < split.tail) {
    const int64_t i = split.tail_start + (t - split.head);
    pass.out[i] = relu_kernel::relu_forward<Fmt>(pass.in[0][i]);
  }
}

__global__ void empty_kernel() {}

constexpr int kBadArguments = -1;

using Launcher = int (*)(const void* in, void* out, int64_t n, cudaStream_t stream);

template <typename Fmt, int kThreads, int kVectors, Kind kKind>
int launch(const void* in_ptr, void* out_ptr, int64_t n, cudaStream_t stream) {
  using Storage = typename Fmt::Storage;
  const auto* in = static_cast<const Storage*>(in_ptr);
  auto* out = static_cast<Storage*>(out_ptr);
  // The study times aligned pairs of whole vectors only: no head, no tail.
  const int64_t per_vector = 16 / int64_t(sizeof(Storage));
  if (relu_kernel::misalignment16(in) != 0 || relu_kernel::misalignment16(out) != 0 ||
      n % per_vector != 0 || n / per_vector > (int64_t(1) << 30)) {
    return kBadArguments;
  }
  const int64_t vectors = n / per_vector;
  const int64_t per_block = int64_t(kThreads) * kVectors;
  const unsigned blocks = unsigned(vectors == 0 ? 1 : (vectors + per_block - 1) / per_block);
  if constexpr (kKind == Kind::kProduct) {
    const relu_kernel::Operands<Storage, 1> pass{{in}, out, n};
    const relu_kernel::VectorSplit split = relu_kernel::split_for_vectors(n, 0, int(sizeof(Storage)));
    product_kernel<Fmt, kVectors><<<blocks, kThreads, 0, stream>>>(pass, split);
  } else {
    tile_kernel<Fmt, kThreads, kVectors, kKind == Kind::kCopy, kKind == Kind::kTileL2Prefetch>
        <<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const Vector16*>(in),
                                          reinterpret_cast<Vector16*>(out), int32_t(vectors));
  }
  return int(cudaGetLastError());
}

int launch_empty(const void*, void*, int64_t, cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  return int(cudaGetLastError());
}

struct Variant {
  const char* name;
  Launcher by_dtype[4];
};

template <int kThreads, int kVectors, Kind kKind>
constexpr Variant variant(const char* name) {
  return Variant{name,
                 {&launch<relu_kernel::Float32Format, kThreads, kVectors, kKind>,
                  &launch<relu_kernel::Float16Format, kThreads, kVectors, kKind>,
                  &launch<relu_kernel::BFloat16Format, kThreads, kVectors, kKind>,
                  &launch<relu_kernel::Int8Format, kThreads, kVectors, kKind>}};
}

constexpr Kind T = Kind::kTile;
constexpr Kind P = Kind::kTileL2Prefetch;
constexpr Kind R = Kind::kProduct;
constexpr Kind C = Kind::kCopy;

// Shapes from 2 KiB to 32 KiB per block.
const Variant kVariants[] = {
    variant<64, 2, T>("tile t64 v2"),     variant<64, 4, T>("tile t64 v4"),
    variant<64, 8, T>("tile t64 v8"),     variant<128, 1, T>("tile t128 v1"),
    variant<128, 2, T>("tile t128 v2"),   variant<128, 4, T>("tile t128 v4"),
    variant<128, 8, T>("tile t128 v8"),   variant<256, 1, T>("tile t256 v1"),
    variant<256, 2, T>("tile t256 v2"),   variant<256, 4, T>("tile t256 v4"),
    variant<256, 8, T>("tile t256 v8"),   variant<512, 1, T>("tile t512 v1"),
    variant<512, 2, T>("tile t512 v2"),   variant<512, 4, T>("tile t512 v4"),
    variant<1024, 1, T>("tile t1024 v1"), variant<1024, 2, T>("tile t1024 v2"),
    variant<128, 2, P>("tile t128 v2 l2pf"), variant<128, 4, P>("tile t128 v4 l2pf"),
    variant<256, 1, P>("tile t256 v1 l2pf"), variant<256, 2, P>("tile t256 v2 l2pf"),
    variant<256, 1, R>("product t256 v1"), variant<128, 2, R>("product t128 v2"),
    variant<128, 2, C>("copy t128 v2"),   variant<256, 1, C>("copy t256 v1"),
    variant<128, 4, C>("copy t128 v4"),
    Variant{"empty", {&launch_empty, &launch_empty, &launch_empty, &launch_empty}},
};

constexpr int kVariantCount = int(sizeof(kVariants) / sizeof(kVariants[0]));

}  // namespace band

extern "C" {

int band_variant_count() { return band::kVariantCount; }

const char* band_variant_name(int variant) {
  return variant < 0 || variant >= band::kVariantCount ? nullptr : band::kVariants[variant].name;
}

// 0 on success, a cudaError_t, or -1 for arguments the variant cannot take.
int band_launch(int variant, int dtype, const void* in, void* out, int64_t n, void* stream) {
  if (variant < 0 || variant >= band::kVariantCount || dtype < 0 || dtype > 3) return band::kBadArguments;
  return band::kVariants[variant].by_dtype[dtype](in, out, n, static_cast<cudaStream_t>(stream));
}

}  // extern "C"
