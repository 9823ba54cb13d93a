// The CPU backend's measured constants, one line each: value, CPU and ISA, the results behind it.
// A constant is tuned on both an AVX2 and an AVX-512 CPU where results exist for both.
#pragma once

#include <cstdint>

namespace relu_kernel::cpu_tuning {

// A pass below kSplitBytes of input runs on the calling thread; above, over torch's pool.
constexpr int64_t kSplitBytes = 256 * 1024;  // Zen 3 AVX2 2 threads, Xeon AVX-512 16 threads: results/studies/launch-policy/cpu-avx2/band.json, results/studies/launch-policy/cpu-xeon-avx512/band.json
// The smallest task a split pass hands to one thread.
constexpr int64_t kTaskBytes = 64 * 1024;  // Xeon AVX-512 16 threads, Zen 3 AVX2 2 threads: results/studies/launch-policy/cpu-xeon-avx512/band.json, results/studies/launch-policy/cpu-avx2/band.json
// Vectors per trip of a dense loop (GCC unroll).
constexpr int kVectorsPerLoopTrip = 2;  // Zen 3 AVX2, Xeon AVX-512: results/studies/launch-policy/cpu-avx2/band-unroll.json, results/studies/launch-policy/cpu-xeon-avx512/band.json
// The AVX-512 variant's vector width under GCC (clang takes no tuning option in a target).
#define RELU_AVX512_VECTOR_WIDTH "prefer-vector-width=256"  // Zen 4 AVX-512: results/studies/launch-policy/cpu-amd-epyc-avx512/vector_width.json

}  // namespace relu_kernel::cpu_tuning
