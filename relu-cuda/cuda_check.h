// CUDA runtime errors and the current device and stream, with the CUDA runtime and the torch
// stable C shim only (no c10): the CUDA variant is built on the torch stable ABI.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

// torch's current CUDA stream of a device. A C shim function of libtorch (torch >= 2.3,
// kernel-abi-check's shim_function_versions.txt); the stable headers declare it only when
// torch itself is built with USE_CUDA, so it is declared here.
extern "C" int32_t aoti_torch_get_current_cuda_stream(int32_t device_index, void** ret_stream);

namespace relu_kernel {

inline void check_cuda(cudaError_t status) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("relu: CUDA error: ") + cudaGetErrorName(status) + ": " +
                             cudaGetErrorString(status));
  }
}

inline cudaStream_t current_cuda_stream(int32_t device) {
  void* stream = nullptr;
  if (aoti_torch_get_current_cuda_stream(device, &stream) != 0) {
    throw std::runtime_error("relu: torch could not give the current CUDA stream");
  }
  return static_cast<cudaStream_t>(stream);
}

// Makes `device` current for the scope (a kernel launches on the current device), and
// restores the previous one; a no-op when it already is current, as c10's CUDAGuard.
class CudaDeviceScope {
 public:
  explicit CudaDeviceScope(int32_t device) {
    check_cuda(cudaGetDevice(&previous_));
    if (previous_ != device) check_cuda(cudaSetDevice(device));
  }
  ~CudaDeviceScope() {
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
  }
  CudaDeviceScope(const CudaDeviceScope&) = delete;
  CudaDeviceScope& operator=(const CudaDeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace relu_kernel
