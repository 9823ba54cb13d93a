// The measured constants of the CUDA launch policy (launch_policy.h), one per line: its value,
// the device it was tuned on and the run behind it. GPU time per call from CUDA-graph replay;
// PERFORMANCE.md ("Why the constants are what they are") and L2_BAND_CLIFF.md tell the runs.
// Other architectures take the same values, scaled by their SM count, resident threads and L2.
#pragma once

#include <cstdint>
#include <type_traits>

#include "relu-common/relu_element.h"

namespace relu_kernel::tuning {

// Dense pass.
constexpr int kBlockThreads = 256;            // H200, results/studies/launch-policy/h200-run1/tune.json
constexpr int kStreamVectorsPerThread = 1;    // H200, results/studies/launch-policy/h200-run1/tune.json
constexpr int kTileOneVectorThreads = 256;    // H200, results/studies/l2-band/tile-forms/l2_band.json
constexpr int kTileTwoVectorsThreads = 128;   // H200, results/studies/l2-band/tile-forms/l2_band.json
constexpr int64_t kStreamingFootprintL2Numerator = 3;    // H200, results/studies/l2-band/hints/run3/l2_band.json
constexpr int64_t kStreamingFootprintL2Denominator = 4;  // H200, results/studies/l2-band/hints/run3/l2_band.json

// Strided passes.
constexpr int64_t kShortRowBytes = 2048;      // H200, results/studies/launch-policy/h200-views/views-rows512.json
constexpr int kStridedThreadsBelowOneWave = 128;  // not measured: the run was not kept; half-size blocks spread a small pass over twice the SMs
constexpr int kMinRowThreads = 64;            // not measured: the smallest block of which an SM holds a full complement (32 x 64 = 2048 threads)
constexpr int kScalarElementsInFlight = 4;    // not measured: TensorIterator's non-vectorized vt = 4 (CUDALoops.cuh)
// The formats whose strided passes keep their own kernels; the rest share one per element size.
template <typename Fmt>
constexpr bool kOwnStridedKernels =  // H200, results/studies/l2-band/merged/ks/kernel_sharing.json
    std::is_same<Fmt, Float32Format>::value || std::is_same<Fmt, Float16Format>::value ||
    std::is_same<Fmt, BFloat16Format>::value || std::is_same<Fmt, Int8Format>::value ||
    std::is_same<Fmt, UInt8Format>::value;

}  // namespace relu_kernel::tuning
