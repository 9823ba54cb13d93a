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
