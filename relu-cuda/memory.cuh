// Every global-memory access of the CUDA kernels: 16-byte vector loads and stores with an
// optional streaming hint, and the shifted loads of an input misaligned against out. Kernels
// stay free of inline PTX and pointer casts; a new access form is added here, once.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "relu-common/vector16.h"

namespace relu_kernel {

// The cache policy of a pass's loads and stores; kStreaming (.cs, evict-first) keeps a large pass
// from pushing out data that is reused. No read-only (__ldg) form: in place, a kernel writes what
// it reads.
enum class CacheHint : uint8_t { kDefault, kStreaming };

// A launcher instantiates its kernel for every hint here, so no hint lacks a compiled kernel.
template <typename Fn>
void visit_cache_hint(CacheHint hint, Fn&& fn) {
  switch (hint) {
    case CacheHint::kDefault: return fn(std::integral_constant<CacheHint, CacheHint::kDefault>{});
    case CacheHint::kStreaming: return fn(std::integral_constant<CacheHint, CacheHint::kStreaming>{});
  }
}

// A vector moves as four 32-bit words through uint4, the type of the runtime's load and store
// intrinsics (one 128-bit access each). Input addresses stay uint4 pointers: on a Vector16
// pointer some architectures get other address arithmetic.
template <CacheHint kHint>
__device__ __forceinline__ Vector16<uint32_t> load_vector16(const uint4* address) {
  uint4 v;
  if constexpr (kHint == CacheHint::kStreaming) {
    v = __ldcs(address);
  } else {
    v = *address;
  }
  return Vector16<uint32_t>{{v.x, v.y, v.z, v.w}};
}

template <CacheHint kHint>
__device__ __forceinline__ void store_vector16(Vector16<uint32_t>* address,
                                               Vector16<uint32_t> value) {
  uint4* p = reinterpret_cast<uint4*>(address);
  const uint4 v{value.words[0], value.words[1], value.words[2], value.words[3]};
  if constexpr (kHint == CacheHint::kStreaming) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

// The same 16 bytes as words of another width (a register move after optimisation).
template <typename To, typename From>
__device__ __forceinline__ Vector16<To> as_words(Vector16<From> v) {
  Vector16<To> w;
  memcpy(&w, &v, kVectorBytes);
  return w;
}

// An input whose address differs from out's modulo 16: each out-aligned vector's 16 input bytes
// straddle two aligned granules, both loaded whole and shifted into place in registers, so every
// access stays 16 bytes wide. Each granule loaded holds a byte of the input (shift 0 loads the
// first twice), so no load leaves it; the neighbour thread's shared granule costs L1 traffic,
// not DRAM bytes, and was faster than passing it over by warp shuffle.
struct ShiftedVectors {
  const uint4* granules;
  int shift;
};

// Pointer arithmetic, not an integer round trip, which would lose that the pointer is global.
__host__ __device__ __forceinline__ ShiftedVectors shifted_vectors(const void* first_byte) {
  const int shift = int(reinterpret_cast<uintptr_t>(first_byte) % kVectorBytes);
  return ShiftedVectors{
      reinterpret_cast<const uint4*>(static_cast<const char*>(first_byte) - shift), shift};
}

// Bytes [shift, shift + 16) of lo:hi: selects where the shift is whole words, else funnel shifts
// of selected words (the selects are uniform across the warp).
template <int kElementBytes>
__device__ __forceinline__ Vector16<uint32_t> funnel_vector16(Vector16<uint32_t> lo,
                                                              Vector16<uint32_t> hi, int shift) {
  const uint32_t w[8] = {lo.words[0], lo.words[1], lo.words[2], lo.words[3],
                         hi.words[0], hi.words[1], hi.words[2], hi.words[3]};
  const int words = shift >> 2;
  uint32_t by_one[7], s[5];
#pragma unroll
  for (int i = 0; i < 7; ++i) by_one[i] = (words & 1) ? w[i + 1] : w[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) s[i] = (words & 2) ? by_one[i + 2] : by_one[i];
  if constexpr (kElementBytes >= 4) {
    return Vector16<uint32_t>{{s[0], s[1], s[2], s[3]}};
  } else {
    const unsigned bits = unsigned(shift & 3) * 8;
    return Vector16<uint32_t>{{__funnelshift_r(s[0], s[1], bits),
                               __funnelshift_r(s[1], s[2], bits),
                               __funnelshift_r(s[2], s[3], bits),
                               __funnelshift_r(s[3], s[4], bits)}};
  }
}

// Vector `i` of a shifted input: its two granules, loaded with the pass's hint.
template <CacheHint kHint, int kElementBytes>
__device__ __forceinline__ Vector16<uint32_t> load_shifted_vector16(const ShiftedVectors& in,
                                                                    int64_t i) {
  const Vector16<uint32_t> lo = load_vector16<kHint>(in.granules + i);
  const Vector16<uint32_t> hi = load_vector16<kHint>(in.granules + i + (in.shift != 0 ? 1 : 0));
  return funnel_vector16<kElementBytes>(lo, hi, in.shift);
}

// A pass's (or a row's) inputs as vectors on out's grid from element `head`. kShifted: some
// input is misaligned against out, so every input loads shifted (shift 0 where it is not).
template <int kInputs, int kElementBytes, bool kShifted>
struct InputVectors {
  ShiftedVectors in[kInputs];

  template <typename T>
  __device__ __forceinline__ InputVectors(const T* const (&first)[kInputs], int64_t head) {
#pragma unroll
    for (int k = 0; k < kInputs; ++k) {
      if constexpr (kShifted) {
        in[k] = shifted_vectors(first[k] + head);
      } else {
        in[k] = ShiftedVectors{reinterpret_cast<const uint4*>(first[k] + head), 0};
      }
    }
  }

  template <CacheHint kHint>
  __device__ __forceinline__ Vector16<uint32_t> load(int k, int64_t i) const {
    if constexpr (kShifted) {
      return load_shifted_vector16<kHint, kElementBytes>(in[k], i);
    } else {
      return load_vector16<kHint>(in[k].granules + i);
    }
  }
};

// One element with the same hints, for strided rows that no vector covers.
template <CacheHint kHint, typename T>
__device__ __forceinline__ T load_element(const T* address) {
  if constexpr (kHint == CacheHint::kStreaming) {
    return __ldcs(address);
  } else {
    return *address;
  }
}

template <CacheHint kHint, typename T>
__device__ __forceinline__ void store_element(T* address, T value) {
  if constexpr (kHint == CacheHint::kStreaming) {
    __stcs(address, value);
  } else {
    *address = value;
  }
}

}  // namespace relu_kernel
