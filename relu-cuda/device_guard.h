// The device a CUDA entry point runs on: torch's own guard, where one is needed.
#pragma once

#include <cstdint>
#include <optional>

#include <cuda_runtime.h>

#include <torch/csrc/stable/accelerator.h>

#include "relu-cuda/cuda_check.h"

namespace relu_kernel {

// Makes `device` current for the scope; where it already is, nothing is set or restored.
// Otherwise torch's stable DeviceGuard, which restores with c10's MaybeSetDevice: a plain
// cudaSetDevice(previous) would create a primary context on a GPU the process never used.
class CudaDeviceScope {
 public:
  explicit CudaDeviceScope(int32_t device) {
    int current = -1;
    check_cuda(cudaGetDevice(&current));
    if (current != device) guard_.emplace(device);
  }
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  std::optional<torch::stable::accelerator::DeviceGuard> guard_;
};

}  // namespace relu_kernel
