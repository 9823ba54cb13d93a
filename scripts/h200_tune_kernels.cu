// Kernel variants for scripts/h200_tune.py (not part of the package): the package's own
// kernels (relu-cuda/relu_cuda.cu, included whole) launched with every launch choice the
// policy could make, plus the two peers that no library provides:
//   - copy_vector16: the same loop as the ReLU with the arithmetic left out, i.e. a plain
//     16-byte copy kernel (the bandwidth ceiling of the issue's targets);
//   - relu_one_block_per_row: upstream kernels-community/relu's launch pattern, written from
//     its description: grid = rows, block = min(columns, 1024), a strided loop over a row.
#include <torch/extension.h>

#include "relu-cuda/relu_cuda.cu"

namespace relu_kernel {
namespace {

template <typename Fmt>
struct CopyOp {
  using Format = Fmt;
  static constexpr int kInputs = 1;
  static __device__ __forceinline__ Vector16 vector(const Vector16 (&in)[1]) { return in[0]; }
  static __device__ __forceinline__ typename Fmt::Storage element(
      const typename Fmt::Storage* const (&in)[1], int64_t i) {
    return in[0][i];
  }
};

template <template <typename> class OpOf, typename Fmt, int kVectors, CacheHint kLoad,
          CacheHint kStore>
void launch_variant(const at::Tensor& x, at::Tensor& out, int threads, int64_t blocks) {
  using Op = OpOf<Fmt>;
  const Pass<Fmt, 1> pass{{data_of<Fmt>(x)}, mutable_data_of<Fmt>(out), x.numel()};
  TORCH_CHECK(misalignment16(pass.in[0]) == misalignment16(pass.out), "tune: same misalignment only");
  const VectorSplit split =
      split_for_vectors(pass.n, misalignment16(pass.out), int(sizeof(typename Fmt::Storage)));
  const int64_t exact = blocks_for(split.vectors, int64_t(threads) * kVectors);
  const LaunchPolicy policy{threads, kVectors, blocks > 0 ? std::min(blocks, exact) : exact,
                            kLoad, kStore};
  launch_vector16<Op, kVectors, kLoad, kStore>(
      pass, split, policy, c10::cuda::getCurrentCUDAStream(x.device().index()).stream());
}

template <template <typename> class OpOf, typename Fmt, int kVectors>
void with_hints(const at::Tensor& x, at::Tensor& out, int threads, int64_t blocks, int load,
                int store) {
  TORCH_CHECK(load != 2 || x.data_ptr() != out.data_ptr(), "tune: read-only loads need out != x");
  const int hints = load * 2 + store;
  switch (hints) {
    case 0: return launch_variant<OpOf, Fmt, kVectors, CacheHint::kDefault, CacheHint::kDefault>(x, out, threads, blocks);
    case 1: return launch_variant<OpOf, Fmt, kVectors, CacheHint::kDefault, CacheHint::kStreaming>(x, out, threads, blocks);
    case 2: return launch_variant<OpOf, Fmt, kVectors, CacheHint::kStreaming, CacheHint::kDefault>(x, out, threads, blocks);
    case 3: return launch_variant<OpOf, Fmt, kVectors, CacheHint::kStreaming, CacheHint::kStreaming>(x, out, threads, blocks);
    case 4: return launch_variant<OpOf, Fmt, kVectors, CacheHint::kReadOnly, CacheHint::kDefault>(x, out, threads, blocks);
    case 5: return launch_variant<OpOf, Fmt, kVectors, CacheHint::kReadOnly, CacheHint::kStreaming>(x, out, threads, blocks);
  }
  TORCH_CHECK(false, "tune: load hint 0 (default), 1 (streaming) or 2 (read-only); store hint 0 or 1");
}

template <template <typename> class OpOf, typename Fmt>
void with_vectors(const at::Tensor& x, at::Tensor& out, int vectors, int threads,
                  int64_t blocks, int load, int store) {
  switch (vectors) {
    case 1: return with_hints<OpOf, Fmt, 1>(x, out, threads, blocks, load, store);
    case 2: return with_hints<OpOf, Fmt, 2>(x, out, threads, blocks, load, store);
    case 4: return with_hints<OpOf, Fmt, 4>(x, out, threads, blocks, load, store);
  }
  TORCH_CHECK(false, "tune: vectors per thread are 1, 2 or 4");
}

// The dtypes of the issue's targets only (each one costs compile time).
template <template <typename> class OpOf>
void dispatch(const at::Tensor& x, at::Tensor& out, int vectors, int threads, int64_t blocks,
              int load, int store) {
  TORCH_CHECK(x.is_cuda() && out.is_cuda() && x.is_contiguous() && out.is_contiguous() &&
              x.numel() == out.numel() && x.dtype() == out.dtype());
  const c10::cuda::CUDAGuard guard(x.device());
  switch (x.scalar_type()) {
    case at::kFloat: return with_vectors<OpOf, Float32Format>(x, out, vectors, threads, blocks, load, store);
    case at::kHalf: return with_vectors<OpOf, Float16Format>(x, out, vectors, threads, blocks, load, store);
    case at::kBFloat16: return with_vectors<OpOf, BFloat16Format>(x, out, vectors, threads, blocks, load, store);
    case at::kChar: return with_vectors<OpOf, Int8Format>(x, out, vectors, threads, blocks, load, store);
    default: TORCH_CHECK(false, "tune: float32, float16, bfloat16, int8 only");
  }
}

void relu_variant(const at::Tensor& x, at::Tensor& out, int vectors, int threads,
                  int64_t blocks, int load, int store) {
  dispatch<ForwardOp>(x, out, vectors, threads, blocks, load, store);
}

void copy_variant(const at::Tensor& x, at::Tensor& out, int vectors, int threads,
                  int64_t blocks, int load, int store) {
  dispatch<CopyOp>(x, out, vectors, threads, blocks, load, store);
}

__global__ void relu_one_block_per_row_kernel(float* __restrict__ out,
                                              const float* __restrict__ input, int d) {
  const int64_t row = blockIdx.x;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float v = input[row * d + i];
    out[row * d + i] = v > 0.0f ? v : 0.0f;
  }
}

void relu_one_block_per_row(const at::Tensor& x, at::Tensor& out) {
  TORCH_CHECK(x.scalar_type() == at::kFloat && x.is_contiguous() && out.is_contiguous());
  const c10::cuda::CUDAGuard guard(x.device());
  const int d = int(x.size(-1));
  const int64_t rows = x.numel() / d;
  relu_one_block_per_row_kernel<<<unsigned(rows), unsigned(std::min(d, 1024)), 0,
                                  c10::cuda::getCurrentCUDAStream().stream()>>>(
      out.data_ptr<float>(), x.data_ptr<float>(), d);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

std::vector<int64_t> device_traits_of(int64_t device) {
  const DeviceTraits& t = device_traits(c10::DeviceIndex(device));
  return {t.sm_count, t.l2_bytes, t.compute_capability};
}

}  // namespace
}  // namespace relu_kernel

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("relu_variant", &relu_kernel::relu_variant);
  m.def("copy_variant", &relu_kernel::copy_variant);
  m.def("relu_one_block_per_row", &relu_kernel::relu_one_block_per_row);
  m.def("device_traits", &relu_kernel::device_traits_of);
}
