// CUDA runtime errors and the current stream, with the CUDA runtime and the torch stable C
// shim only (no c10): the CUDA variant is built on the torch stable ABI. Changing the device:
// device_guard.h.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

// A libtorch C shim function (torch >= 2.3) that the stable headers declare only in CUDA builds
// of torch.
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

}  // namespace relu_kernel
