// Vector16, the unit of every GPU access, and how a dense range splits around it: an
// unaligned head, whole vectors, a tail. Plain C++, so the host tests run it too.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__CUDACC__)
#define RELU_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RELU_HOST_DEVICE inline
#endif

namespace relu_kernel {

// The widest load and store a GPU thread issues on every architecture built for.
constexpr int kVectorBytes = 16;

// Word: uint32_t (a GPU register) for elements narrower than 8 bytes, else uint64_t.
template <typename Word>
struct alignas(kVectorBytes) Vector16 {
  static constexpr int kWords = int(kVectorBytes / sizeof(Word));
  Word words[kWords];
};

// Two arrays share one split only where these are equal.
RELU_HOST_DEVICE int misalignment16(const void* address) {
  return int(reinterpret_cast<uintptr_t>(address) % kVectorBytes);
}

struct VectorSplit {
  int64_t head;        // elements before the first vector (< 16 / element_bytes)
  int64_t vectors;     // whole 16-byte vectors after the head
  int64_t tail_start;  // first element after the last vector
  int64_t tail;        // elements after the last vector (< 16 / element_bytes)
};

RELU_HOST_DEVICE VectorSplit split_for_vectors(int64_t n, int misalignment, int element_bytes) {
  const int64_t per_vector = kVectorBytes / element_bytes;
  int64_t head = misalignment == 0 ? 0 : (kVectorBytes - misalignment) / element_bytes;
  if (head > n) head = n;
  const int64_t vectors = (n - head) / per_vector;
  const int64_t tail_start = head + vectors * per_vector;
  return VectorSplit{head, vectors, tail_start, n - tail_start};
}

// The kernels count in whole elements: torch allocations and their views are aligned so,
// imported memory may not be.
inline void require_element_aligned(const void* address, int element_bytes, const char* name) {
  if (reinterpret_cast<uintptr_t>(address) % uintptr_t(element_bytes) != 0) {
    throw std::invalid_argument(std::string("relu: ") + name +
                                "'s address is not a multiple of its element size; pass a "
                                "tensor from a torch allocation");
  }
}

}  // namespace relu_kernel
