// Every global-memory access the CUDA kernels make: 16-byte vector loads and stores with
// an optional streaming (evict-first) hint, plus the alignment arithmetic that decides
// which part of a tensor those vectors may cover. Kernels stay free of inline PTX and
// pointer casts; a new access form is added here, once.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "relu-common/relu_element.h"

namespace relu_kernel {

// Bytes of one vector access. 16 is the widest load/store a thread can issue (LDG.E.128 /
// STG.E.128) on every architecture the package builds for.
constexpr int kVectorBytes = 16;

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

// One 16-byte vector as the hardware moves it.
using Vector16 = uint4;
static_assert(sizeof(Vector16) == kVectorBytes, "uint4 is the 16-byte vector type");

template <CacheHint kHint>
__device__ __forceinline__ Vector16 load_vector16(const Vector16* address) {
  if constexpr (kHint == CacheHint::kStreaming) {
    return __ldcs(address);
  } else {
    return *address;
  }
}

template <CacheHint kHint>
__device__ __forceinline__ void store_vector16(Vector16* address, Vector16 value) {
  if constexpr (kHint == CacheHint::kStreaming) {
    __stcs(address, value);
  } else {
    *address = value;
  }
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
  const Vector16* granules;
  int shift;
};

// Where `first_byte`'s vector 0 starts (any address; out-aligned vectors follow every 16
// bytes).
// Pointer arithmetic, not an integer round trip: through an integer the compiler loses that
// the pointer is global and emits generic loads (ld.v4, not ld.global.v4).
__host__ __device__ __forceinline__ ShiftedVectors shifted_vectors(const void* first_byte) {
  const int shift = int(reinterpret_cast<uintptr_t>(first_byte) % kVectorBytes);
  return ShiftedVectors{
      reinterpret_cast<const Vector16*>(static_cast<const char*>(first_byte) - shift), shift};
}

// Bytes [shift, shift + 16) of the 32 bytes lo:hi (little-endian). kElementBytes >= 4: the
// shift is a whole number of 32-bit words, selects only; else each word is a funnel shift
// (SHF, every arch) of two selected words. The selects are uniform across the warp.
template <int kElementBytes>
__device__ __forceinline__ Vector16 funnel_vector16(Vector16 lo, Vector16 hi, int shift) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int words = shift >> 2;
  uint32_t by_one[7], s[5];
#pragma unroll
  for (int i = 0; i < 7; ++i) by_one[i] = (words & 1) ? w[i + 1] : w[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) s[i] = (words & 2) ? by_one[i + 2] : by_one[i];
  if constexpr (kElementBytes >= 4) {
    return Vector16{s[0], s[1], s[2], s[3]};
  } else {
    const unsigned bits = unsigned(shift & 3) * 8;
    return Vector16{__funnelshift_r(s[0], s[1], bits), __funnelshift_r(s[1], s[2], bits),
                    __funnelshift_r(s[2], s[3], bits), __funnelshift_r(s[3], s[4], bits)};
  }
}

// Vector `i` of a shifted input: its two granules, loaded with the pass's hint.
template <CacheHint kHint, int kElementBytes>
__device__ __forceinline__ Vector16 load_shifted_vector16(const ShiftedVectors& in, int64_t i) {
  const Vector16 lo = load_vector16<kHint>(in.granules + i);
  const Vector16 hi = load_vector16<kHint>(in.granules + i + (in.shift != 0 ? 1 : 0));
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
        in[k] = ShiftedVectors{reinterpret_cast<const Vector16*>(first[k] + head), 0};
      }
    }
  }

  template <CacheHint kHint>
  __device__ __forceinline__ Vector16 load(int k, int64_t i) const {
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

// The same 16 bytes seen as lanes of Fmt (relu_element.h computes on Word16<Fmt>).
template <typename Fmt>
__device__ __forceinline__ Word16<Fmt> as_word16(Vector16 v) {
  static_assert(sizeof(Word16<Fmt>) == sizeof(Vector16), "a Word16 is one vector");
  Word16<Fmt> w;
  memcpy(&w, &v, sizeof(v));  // a register move after optimisation
  return w;
}

template <typename Fmt>
__device__ __forceinline__ Vector16 as_vector16(Word16<Fmt> w) {
  Vector16 v;
  memcpy(&v, &w, sizeof(v));
  return v;
}

// Address modulo 16: two pointers can share 16-byte vectors only if these are equal.
__host__ __device__ __forceinline__ int misalignment16(const void* address) {
  return int(reinterpret_cast<uintptr_t>(address) % kVectorBytes);
}

__host__ __device__ __forceinline__ bool is_element_aligned(const void* address,
                                                            int element_bytes) {
  return reinterpret_cast<uintptr_t>(address) % element_bytes == 0;
}

// How `n` elements of `element_bytes` at a pointer of misalignment `misalignment`
// (equal for every pointer involved) split into a scalar head up to the first 16-byte
// boundary, whole 16-byte vectors, and a scalar tail.
struct VectorSplit {
  int64_t head;       // elements before the first vector (< 16 / element_bytes)
  int64_t vectors;    // whole 16-byte vectors after the head
  int64_t tail_start; // first element after the last vector
  int64_t tail;       // elements after the last vector (< 16 / element_bytes)
};

// On the host for a dense pass; on the device for each row of a strided one, whose rows
// may start at different misalignments.
__host__ __device__ __forceinline__ VectorSplit split_for_vectors(int64_t n, int misalignment,
                                                                  int element_bytes) {
  const int64_t per_vector = kVectorBytes / element_bytes;
  int64_t head = misalignment == 0 ? 0 : (kVectorBytes - misalignment) / element_bytes;
  if (head > n) head = n;
  const int64_t vectors = (n - head) / per_vector;
  const int64_t tail_start = head + vectors * per_vector;
  return VectorSplit{head, vectors, tail_start, n - tail_start};
}

}  // namespace relu_kernel
