// The device a CUDA entry point runs on: torch's own guard, where one is needed.
#pragma once

#include <cstdint>
#include <optional>

#include <cuda_runtime.h>

#include <torch/csrc/stable/accelerator.h>

#include "relu-cuda/cuda_check.h"

namespace relu_kernel {

// Makes `device` current for the scope (a kernel launches on the runtime's current device).
// Where it already is current (every call of a process on one GPU, and of a rank that set its
// device), nothing is set or restored: one cudaGetDevice, as before any guard. Otherwise
// torch's stable DeviceGuard (c10::DeviceGuard behind the C shim; torch >= 2.9), which
// restores the previous device with c10's MaybeSetDevice: a device that has no context yet
// is left without one. A plain cudaSetDevice(previous) would create the primary context
// there, hundreds of MiB on a GPU the process never used (a torchrun rank on cuda:1 that
// never called set_device). tests/test_cuda_compile.py holds the objects to it: no
// cudaSetDevice.
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
