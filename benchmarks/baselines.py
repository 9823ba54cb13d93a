"""Peers that torch does not offer, compiled at benchmark time with
torch.utils.cpp_extension.load_inline and registered as torch ops (so they are called
through the same dispatcher path as ours, and CUDA graphs can capture them):

- CPU, `sse_relu(out, x)`: upstream's CPU kernel rewritten from its description, one
  thread, four floats per SSE step, a scalar tail (float32, contiguous).
- CUDA, `row_relu(out, x)`: upstream's CUDA launch pattern rewritten from its description,
  one block per row of the last dimension, min(row, 1024) threads looping over the row's
  columns, one float per access (float32, contiguous).
- CUDA, `copy16(out, x)`: a plain copy, one 16-byte vector per thread: with `out.copy_(x)`
  the bandwidth ceiling (torch's copy_ takes a slower path at 1 GiB, ../shared/ANCHORS.md).
- CUDA, a plain Triton ReLU (`load_triton_relu`): one tl.load, tl.where(x > 0, x, 0), one
  tl.store, no cache hints, at BLOCK 1024-8192 x 4 or 8 warps; roughly what Inductor writes
  for a lone relu, in a dozen lines. Every dtype; NaN -> 0 and -0.0 -> +0, as ours.

The CUDA sources include no torch headers in the .cu file, so they compile in seconds.
"""

import os

import torch

try:  # Triton ships with every Linux CUDA torch wheel; a CPU torch may lack it
    import triton
    import triton.language as tl
except Exception:  # noqa: BLE001  (a broken install must not stop the CPU peers)
    triton = None

CPU_NAMESPACE = "relu_sweep_cpu_baselines"
CUDA_NAMESPACE = "relu_sweep_cuda_baselines"

CPU_SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <immintrin.h>

namespace {

void check_float32_pair(const at::Tensor& out, const at::Tensor& x) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && out.scalar_type() == at::kFloat,
              "baseline takes float32");
  TORCH_CHECK(x.is_contiguous() && out.is_contiguous() && x.numel() == out.numel(),
              "baseline takes contiguous tensors of equal size");
}

// Upstream's CPU kernel as described: one thread, 4-wide SSE max with zero, scalar tail.
void sse_relu(at::Tensor& out, const at::Tensor& x) {
  check_float32_pair(out, x);
  const float* in = x.const_data_ptr<float>();
  float* dst = out.mutable_data_ptr<float>();
  const int64_t n = x.numel();
  const __m128 zero = _mm_setzero_ps();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, _mm_max_ps(_mm_loadu_ps(in + i), zero));
  for (; i < n; ++i) dst[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

}  // namespace

TORCH_LIBRARY(relu_sweep_cpu_baselines, m) {
  m.def("sse_relu(Tensor(a!) out, Tensor x) -> ()");
}
TORCH_LIBRARY_IMPL(relu_sweep_cpu_baselines, CPU, m) { m.impl("sse_relu", &sse_relu); }
"""

CUDA_KERNELS = r"""
#include <cstdint>
#include <cuda_runtime.h>

// Upstream's launch as described: grid = one block per row, each thread strides the row.
__global__ void row_relu_kernel(float* __restrict__ out, const float* __restrict__ in,
                                int64_t row_length) {
  const int64_t row_start = static_cast<int64_t>(blockIdx.x) * row_length;
  for (int64_t col = threadIdx.x; col < row_length; col += blockDim.x) {
    const float v = in[row_start + col];
    out[row_start + col] = v > 0.0f ? v : 0.0f;
  }
}

// One 16-byte vector per thread: the plain copy that serves as bandwidth ceiling.
__global__ void copy16_kernel(int4* __restrict__ out, const int4* __restrict__ in, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

cudaError_t launch_row_relu(float* out, const float* in, int64_t rows, int64_t row_length,
                            cudaStream_t stream) {
  if (rows == 0 || row_length == 0) return cudaSuccess;
  if (rows > 2147483647LL) return cudaErrorInvalidConfiguration;
  const int threads = row_length < 1024 ? static_cast<int>(row_length) : 1024;
  row_relu_kernel<<<static_cast<unsigned>(rows), threads, 0, stream>>>(out, in, row_length);
  return cudaGetLastError();
}

cudaError_t launch_copy16(void* out, const void* in, int64_t vectors, cudaStream_t stream) {
  if (vectors == 0) return cudaSuccess;
  const int threads = 256;
  const int64_t blocks = (vectors + threads - 1) / threads;
  if (blocks > 2147483647LL) return cudaErrorInvalidConfiguration;
  copy16_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<int4*>(out), static_cast<const int4*>(in), vectors);
  return cudaGetLastError();
}
"""

CUDA_HOST = r"""
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

cudaError_t launch_row_relu(float* out, const float* in, int64_t rows, int64_t row_length,
                            cudaStream_t stream);
cudaError_t launch_copy16(void* out, const void* in, int64_t vectors, cudaStream_t stream);

namespace {

void check_pair(const at::Tensor& out, const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && out.device() == x.device(), "baseline takes CUDA tensors on one device");
  TORCH_CHECK(x.is_contiguous() && out.is_contiguous() && x.numel() == out.numel() &&
              x.scalar_type() == out.scalar_type(),
              "baseline takes contiguous tensors of equal size and dtype");
}

void row_relu(at::Tensor& out, const at::Tensor& x) {
  check_pair(out, x);
  TORCH_CHECK(x.scalar_type() == at::kFloat, "row_relu takes float32");
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t row_length = x.dim() == 0 ? 1 : x.size(-1);
  const int64_t rows = row_length == 0 ? 0 : x.numel() / row_length;
  const cudaError_t err = launch_row_relu(out.mutable_data_ptr<float>(), x.const_data_ptr<float>(),
                                          rows, row_length, c10::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == cudaSuccess, "row_relu launch: ", cudaGetErrorString(err));
}

void copy16(at::Tensor& out, const at::Tensor& x) {
  check_pair(out, x);
  const int64_t bytes = x.numel() * static_cast<int64_t>(x.element_size());
  TORCH_CHECK(bytes % 16 == 0 && reinterpret_cast<uintptr_t>(x.const_data_ptr()) % 16 == 0 &&
              reinterpret_cast<uintptr_t>(out.const_data_ptr()) % 16 == 0,
              "copy16 takes 16-byte aligned tensors of a multiple of 16 bytes");
  const c10::cuda::CUDAGuard guard(x.device());
  const cudaError_t err = launch_copy16(out.mutable_data_ptr(), x.const_data_ptr(), bytes / 16,
                                        c10::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == cudaSuccess, "copy16 launch: ", cudaGetErrorString(err));
}

}  // namespace

TORCH_LIBRARY(relu_sweep_cuda_baselines, m) {
  m.def("row_relu(Tensor(a!) out, Tensor x) -> ()");
  m.def("copy16(Tensor(a!) out, Tensor x) -> ()");
}
TORCH_LIBRARY_IMPL(relu_sweep_cuda_baselines, CUDA, m) {
  m.impl("row_relu", &row_relu);
  m.impl("copy16", &copy16);
}
"""


def _load_inline(**kwargs):
    """load_inline without its implicit torch/extension.h (our sources include what they
    use, and the .cu file no torch header at all); torch releases before that option get
    the implicit headers, which compile too, only slower."""
    from torch.utils.cpp_extension import load_inline

    try:
        return load_inline(no_implicit_headers=True, **kwargs)
    except TypeError as exc:
        if "no_implicit_headers" not in str(exc):
            raise
        return load_inline(**kwargs)


def load_cpu_baselines():
    """torch.ops namespace with sse_relu (compiled on first use, cached by torch after)."""
    _load_inline(
        name=CPU_NAMESPACE,
        cpp_sources=[CPU_SOURCE],
        extra_cflags=["-O2"],
        is_python_module=False,
        verbose=False,
    )
    return getattr(torch.ops, CPU_NAMESPACE)


def load_cuda_baselines():
    """torch.ops namespace with row_relu and copy16, built for the current GPU only."""
    major, minor = torch.cuda.get_device_capability()
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")
    _load_inline(
        name=CUDA_NAMESPACE,
        cpp_sources=[CUDA_HOST],
        cuda_sources=[CUDA_KERNELS],
        extra_cflags=["-O2"],
        extra_cuda_cflags=["-O3"],
        is_python_module=False,
        with_cuda=True,
        verbose=False,
    )
    return getattr(torch.ops, CUDA_NAMESPACE)


# The plain Triton peer's configurations: (BLOCK elements per program, num_warps).
TRITON_CONFIGS = [(block, warps) for block in (1024, 2048, 4096, 8192) for warps in (4, 8)]
TRITON_DESCRIPTION = ("plain Triton ReLU (tl.load, tl.where(x > 0, x, 0), tl.store), BLOCK x num_warps in "
                      + ", ".join(f"{b}x{w}" for b, w in TRITON_CONFIGS)
                      + "; one peer per config and form (out=: into o; allocating: torch.empty_like, then the "
                      "launch), the report shows the fastest per point")


def triton_peer_name(block: int, warps: int, allocating: bool = False) -> str:
    return f"triton{'_alloc' if allocating else ''}_b{block}_w{warps}"


if triton is not None:

    @triton.jit
    def relu_triton_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(o_ptr + offsets, tl.where(x > 0, x, 0), mask=mask)


def load_triton_relu():
    """`launch(out, x, block, warps)`: the plain Triton ReLU of contiguous x into out (same
    dtype and size), one program per BLOCK elements; returns out."""
    if triton is None:
        raise ImportError("triton is not importable in this Python")

    def launch(out: torch.Tensor, x: torch.Tensor, block: int, warps: int) -> torch.Tensor:
        n = x.numel()
        relu_triton_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, num_warps=warps)
        return out

    return launch
