// Every global-memory access the CUDA kernels make: 16-byte vector loads and stores with
// an optional streaming (evict-first) hint, and the shifted loads of an input whose address
// differs from out's modulo 16. Which part of a range the vectors cover is
// relu-common/vector16.h's split. Kernels stay free of inline PTX and pointer casts; a new
// access form is added here, once.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "relu-common/vector16.h"

namespace relu_kernel {

// L1/L2 policy of a pass's loads and stores alike; each hint is a compiled kernel.
//   kDefault:   ld.global / st.global (cache at all levels, normal eviction priority).
//   kStreaming: ld.global.cs / st.global.cs, "likely accessed once": lines are allocated
//               evict-first in L1 and L2, so a large pass does not push out data that is
//               reused (and a later consumer does not find ours).
// No read-only (__ldg) form: with out == x (in place) a kernel writes what it reads, which
// the non-coherent read-only path does not allow.
enum class CacheHint : uint8_t { kDefault, kStreaming };

// Calls fn(std::integral_constant<CacheHint, hint>{}): a launcher instantiates its kernel for
// every hint here, so a hint without a compiled kernel cannot be chosen (a new enumerator
// without a case is a -Wswitch warning).
template <typename Fn>
void visit_cache_hint(CacheHint hint, Fn&& fn) {
  switch (hint) {
    case CacheHint::kDefault: return fn(std::integral_constant<CacheHint, CacheHint::kDefault>{});
    case CacheHint::kStreaming: return fn(std::integral_constant<CacheHint, CacheHint::kStreaming>{});
  }
}

// A 16-byte vector (relu-common/vector16.h) moves as four 32-bit words, whatever its
// elements (an op sees them as its format's words: as_words), through uint4, the type the
// runtime's load and store intrinsics take: one LDG.E.128 / STG.E.128 each. Input addresses
// stay uint4 pointers (ShiftedVectors): nvcc's address arithmetic on them is the code that
// was measured (on a Vector16 pointer sm_100 and sm_120 get other instructions).
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

// An input whose address differs from out's modulo 16 (x = base[1:] into a fresh output): the
// 16 input bytes of one out-aligned vector straddle two of the input's aligned 16-byte
// granules. Both are loaded whole (LDG.E.128) and the 16 bytes are shifted out of the pair in
// registers, so every access stays 16 bytes wide on both sides. `granules` points at the
// aligned granule holding the first of those bytes for vector 0, `shift` (0-15) is how many
// bytes into it they start. Where shift != 0 each granule holds at least one byte of the
// vector's own input (shift <= 15 at one end, 16 - shift >= 1 at the other), so no load
// reaches a granule outside the input's span; where shift == 0 the second load is the first
// one again (no granule past the span either). The second granule of vector i is the first
// of vector i + 1, read by the neighbouring thread: the pair costs L1 traffic, not DRAM bytes.
// Loading each granule once and passing the neighbour lane's over with a warp shuffle was
// slower on the H200: 2-3% at 1 MiB, 0.5-1% at 64-256 MiB (faster only at 16 MiB, by 0-2%).
struct ShiftedVectors {
  const uint4* granules;
  int shift;
};

// Where `first_byte`'s vector 0 starts (any address; out-aligned vectors follow every 16
// bytes).
// Pointer arithmetic, not an integer round trip: through an integer the compiler loses that
// the pointer is global and emits generic loads (ld.v4, not ld.global.v4).
__host__ __device__ __forceinline__ ShiftedVectors shifted_vectors(const void* first_byte) {
  const int shift = int(reinterpret_cast<uintptr_t>(first_byte) % kVectorBytes);
  return ShiftedVectors{
      reinterpret_cast<const uint4*>(static_cast<const char*>(first_byte) - shift), shift};
}

// Bytes [shift, shift + 16) of the 32 bytes lo:hi (little-endian). kElementBytes >= 4: the
// shift is a whole number of 32-bit words, selects only; else each word is a funnel shift
// (SHF, every arch) of two selected words. The selects are uniform across the warp.
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

// The inputs of one pass (or one strided row) as 16-byte vectors on out's grid, from element
// `head` of each (out's first whole vector). kShifted: some input's address differs from out's
// modulo 16, so every input loads through load_shifted_vector16 (shift 0 for one that does
// not differ); else plain aligned loads, the shifts never read.
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

// One element with the same hints, for the strided kernels' rows that no vector covers.
// Every storage type of relu_element.h's formats has a __ldcs / __stcs overload.
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
