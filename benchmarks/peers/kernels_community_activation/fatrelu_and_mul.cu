// Vendored for benchmarks/gated.py only; never built into the relu package.
// From huggingface/kernels-community, activation/activation/activation_kernels.cu (commit
// 40d4194f48b6775c4be4776ed08035fabb0e758f), cut to fatrelu_and_mul: its kernel, its launcher
// and the two macros they use, from activation/activation/cuda_compat.h (VLLM_LDG) and
// activation/activation/dispatch_utils.h (VLLM_STABLE_DISPATCH_FLOATING_TYPES). Nothing else
// in them is changed.
//
// Activation kernels from vLLM (csrc/activation_kernels.cu). Copyright 2023-2024, the vLLM team.
// Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
// except in compliance with the License. You may obtain a copy of the License at
// http://www.apache.org/licenses/LICENSE-2.0 (also this repository's LICENSE). Unless required
// by applicable law or agreed to in writing, software distributed under the License is
// distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
// or implied. See the License for the specific language governing permissions and limitations
// under the License.

#include <torch/csrc/stable/tensor.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

// The shim's stream accessor is guarded by USE_CUDA, so declare it here.
#include <torch/csrc/inductor/aoti_torch/c/shim.h>
extern "C" AOTITorchError aoti_torch_get_current_cuda_stream(
    int32_t device_index, void** ret_stream);

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include <torch/headeronly/core/Dispatch.h>

// From cuda_compat.h (CUDA branch).
#define VLLM_LDG(arg) __ldg(arg)

// From dispatch_utils.h.
#define VLLM_STABLE_DISPATCH_CASE_FLOATING_TYPES(...)                  \
  THO_DISPATCH_CASE(torch::headeronly::ScalarType::Float, __VA_ARGS__) \
  THO_DISPATCH_CASE(torch::headeronly::ScalarType::Half, __VA_ARGS__)  \
  THO_DISPATCH_CASE(torch::headeronly::ScalarType::BFloat16, __VA_ARGS__)

#define VLLM_STABLE_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  THO_DISPATCH_SWITCH(TYPE, NAME,                            \
                      VLLM_STABLE_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))

using torch::stable::Tensor;

namespace vllm {

template <typename T>
__device__ __forceinline__ T fatrelu_kernel(const T& x, const float threshold) {
  const float f = (float)x;
  return (T)(f > threshold ? f : 0.0f);
}

template <typename scalar_t, scalar_t (*ACT_FN)(const scalar_t&, const float)>
__global__ void act_and_mul_kernel_with_param(
    scalar_t* __restrict__ out, const scalar_t* __restrict__ input, const int d,
    const float param) {
  const int64_t token_idx = blockIdx.x;
  for (int64_t idx = threadIdx.x; idx < d; idx += blockDim.x) {
    const scalar_t x = VLLM_LDG(&input[token_idx * 2 * d + idx]);
    const scalar_t y = VLLM_LDG(&input[token_idx * 2 * d + d + idx]);
    out[token_idx * d + idx] = ACT_FN(x, param) * y;
  }
}

}  // namespace vllm

#define LAUNCH_ACTIVATION_GATE_KERNEL_WITH_PARAM(KERNEL, PARAM)               \
  int d = input.size(-1) / 2;                                                 \
  int64_t num_tokens = input.numel() / input.size(-1);                       \
  dim3 grid(num_tokens);                                                      \
  dim3 block(std::min(d, 1024));                                              \
  const torch::stable::accelerator::DeviceGuard device_guard(                 \
      input.get_device_index());                                             \
  void* stream_ptr = nullptr;                                                 \
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(                  \
      input.get_device_index(), &stream_ptr));                                \
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);          \
  VLLM_STABLE_DISPATCH_FLOATING_TYPES(                                               \
      input.scalar_type(), "act_and_mul_kernel_with_param", [&] {            \
        vllm::act_and_mul_kernel_with_param<scalar_t, KERNEL<scalar_t>>      \
            <<<grid, block, 0, stream>>>(                                     \
                static_cast<scalar_t*>(out.data_ptr()),                       \
                static_cast<const scalar_t*>(input.data_ptr()), d, PARAM);   \
      });

void fatrelu_and_mul(Tensor& out,          // [..., d],
                     Tensor const& input,  // [..., 2 * d]
                     double threshold) {
  STD_TORCH_CHECK(input.is_contiguous(), "input must be contiguous");
  STD_TORCH_CHECK(out.is_contiguous(), "out must be contiguous");
  LAUNCH_ACTIVATION_GATE_KERNEL_WITH_PARAM(vllm::fatrelu_kernel, threshold);
}
