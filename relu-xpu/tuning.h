// The XPU backend's launch constants, one line each. None is measured: this project has no
// SYCL compiler or Intel GPU (relu-xpu/README.md).
#pragma once

#include <cstdint>

namespace relu_kernel::xpu_tuning {

// Work-items per work-group.
constexpr int64_t kWorkGroupSize = 256;  // not measured: every Intel GPU torch's XPU backend supports takes 256 (its limit is 512 or 1024)
// Work-items per launch; past it each work-item loops over several vectors.
constexpr int64_t kMaxItems = int64_t(1) << 28;  // not measured: keeps the global range below 2^31, the ids' limit under -fsycl-id-queries-fit-in-int

}  // namespace relu_kernel::xpu_tuning
