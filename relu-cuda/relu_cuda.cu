// CUDA backend: the dense passes' kernels and the entry points of every pass (the strided
// kernels are in strided.cuh). A dense pass moves whole 16-byte vectors on out's 16-byte grid,
// each computed by the pass's op (relu_ops.cuh); the elements before the first and after the
// last whole vector (head and tail) go one per thread of block 0. An input whose address differs
// from out's modulo 16 is read as shifted granules (memory.cuh), keeping every access 16 bytes
// wide. Everything runs on the tensors' current stream, without allocation or host
// synchronisation, so the op can be captured in a CUDA graph.
#include <cuda_runtime.h>

#include "relu-common/backend_entry_points.h"
#include "relu-common/relu_dtypes.h"
#include "relu-common/relu_element.h"
#include "relu-cuda/cuda_check.h"
#include "relu-cuda/device_guard.h"
#include "relu-cuda/launch_policy.h"
#include "relu-cuda/memory.cuh"
#include "relu-cuda/relu_ops.cuh"
#include "relu-cuda/strided.cuh"

namespace relu_kernel {

template <typename Op>
constexpr int kElementBytes = int(sizeof(typename Op::Storage));

// The looping form: a grid-stride loop over tiles of blockDim.x * kVectors vectors with 64-bit
// offsets, so any count is covered; each thread loads all its vectors of a tile before it
// stores any. In place (out == in[0]) is safe: each vector is read and written by one thread,
// and an input that overlaps out is out itself (the binding rejects partial overlap).
template <typename Op, DenseForm kForm, bool kShifted>
__global__ void elementwise_vector16_loop(Operands<typename Op::Storage, Op::kInputs> operands,
                                          VectorSplit split, Op op) {
  constexpr int kInputs = Op::kInputs;
  constexpr int kVectors = DenseFormTraits<kForm>::kVectors;
  constexpr CacheHint kHint = DenseFormTraits<kForm>::kHint;
  if (blockIdx.x == 0) edge_element(op, operands.in, operands.out, split, threadIdx.x);
  const InputVectors<kInputs, kElementBytes<Op>, kShifted> in(operands.in, split.head);
  Vector16<uint32_t>* out = reinterpret_cast<Vector16<uint32_t>*>(operands.out + split.head);
  const int64_t vectors = split.vectors;
  const int64_t threads = blockDim.x;
  const int64_t tile = threads * kVectors;
  for (int64_t base = int64_t(blockIdx.x) * tile; base < vectors;
       base += int64_t(gridDim.x) * tile) {
    const int64_t first = base + threadIdx.x;
    Vector16<uint32_t> loaded[kVectors][kInputs];
    if (base + tile <= vectors) {  // a whole tile: no bound checks
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
#pragma unroll
        for (int k = 0; k < kInputs; ++k) {
          loaded[j][k] = in.template load<kHint>(k, first + j * threads);
        }
      }
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
        store_vector16<kHint>(out + first + j * threads, op.vector(loaded[j]));
      }
    } else {  // the grid's last, partial tile
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
        const int64_t i = first + j * threads;
        if (i < vectors) {
#pragma unroll
          for (int k = 0; k < kInputs; ++k) loaded[j][k] = in.template load<kHint>(k, i);
          store_vector16<kHint>(out + i, op.vector(loaded[j]));
        }
      }
    }
  }
}

// The tile forms: one tile per block, 32-bit offsets, every vector predicated on its own bound,
// no whole-tile branch and no early exit, so the first load issues early; the head and tail
// come last, where they delay no load.
template <typename Op, DenseForm kForm, bool kShifted>
__global__ void elementwise_vector16_tile(Operands<typename Op::Storage, Op::kInputs> operands,
                                          VectorSplit split, Op op) {
  constexpr int kInputs = Op::kInputs;
  constexpr int kVectors = DenseFormTraits<kForm>::kVectors;
  constexpr CacheHint kHint = DenseFormTraits<kForm>::kHint;
  const InputVectors<kInputs, kElementBytes<Op>, kShifted> in(operands.in, split.head);
  Vector16<uint32_t>* out = reinterpret_cast<Vector16<uint32_t>*>(operands.out + split.head);
  const int32_t vectors = int32_t(split.vectors);
  const int32_t threads = int32_t(blockDim.x);
  const int32_t first = int32_t(blockIdx.x) * threads * kVectors + int32_t(threadIdx.x);
  Vector16<uint32_t> loaded[kVectors][kInputs];
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * threads < vectors) {
#pragma unroll
      for (int k = 0; k < kInputs; ++k) {
        loaded[j][k] = in.template load<kHint>(k, first + j * threads);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * threads < vectors) {
      store_vector16<kHint>(out + first + j * threads, op.vector(loaded[j]));
    }
  }
  if (blockIdx.x == 0) edge_element(op, operands.in, operands.out, split, threadIdx.x);
}

template <typename Op, bool kShifted>
void launch_vector16(const Op& op, const Operands<typename Op::Storage, Op::kInputs>& operands,
                     const VectorSplit& split, const DensePolicy& policy, cudaStream_t stream) {
  visit_dense_form(policy.form, [&](auto form) {
    constexpr DenseForm kForm = decltype(form)::value;
    const unsigned blocks = unsigned(policy.blocks);
    const unsigned threads = unsigned(DenseFormTraits<kForm>::kThreads);
    if constexpr (DenseFormTraits<kForm>::kLoops) {
      elementwise_vector16_loop<Op, kForm, kShifted>
          <<<blocks, threads, 0, stream>>>(operands, split, op);
    } else {
      elementwise_vector16_tile<Op, kForm, kShifted>
          <<<blocks, threads, 0, stream>>>(operands, split, op);
    }
  });
  check_cuda(cudaGetLastError());
}

// `op` over `bytes` of dense operands, each aligned to its element size (the entry points
// check it).
template <typename Op>
void run_pass(const Op& op, const void* const (&in)[Op::kInputs], void* out, int64_t bytes,
              int32_t device) {
  using Storage = typename Op::Storage;
  Operands<Storage, Op::kInputs> operands{};
  for (int k = 0; k < Op::kInputs; ++k) operands.in[k] = static_cast<const Storage*>(in[k]);
  operands.out = static_cast<Storage*>(out);
  operands.n = bytes / int64_t(sizeof(Storage));
  const int out_misalignment = misalignment16(operands.out);
  bool shifted = false;
  for (int k = 0; k < Op::kInputs; ++k) {
    shifted = shifted || misalignment16(operands.in[k]) != out_misalignment;
  }
  const VectorSplit split = split_for_vectors(operands.n, out_misalignment, kElementBytes<Op>);
  const DensePolicy policy =
      choose_dense_policy(device_traits(device), split.vectors, Op::kInputs + 1);
  const cudaStream_t stream = current_cuda_stream(device);
  if (shifted) {
    launch_vector16<Op, true>(op, operands, split, policy, stream);
  } else {
    launch_vector16<Op, false>(op, operands, split, policy, stream);
  }
}

}  // namespace relu_kernel

void relu_flat_cuda(Activation activation, relu_kernel::ScalarType dtype, const void* in,
                    void* out, int64_t n, int32_t device) {
  using namespace relu_kernel;
  const CudaDeviceScope device_scope(device);
  visit_forward(activation, dtype, [&](auto act, auto format) {
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(out, kBytes, "out");
    require_element_aligned(in, kBytes, "x");
    const void* inputs[] = {in};
    run_pass(dense_forward_op<decltype(act)::value, Fmt>(), inputs, out, n * kBytes, device);
  });
}

void relu_backward_flat_cuda(Activation activation, relu_kernel::ScalarType dtype,
                             const void* grad_out, const void* saved, void* grad_in, int64_t n,
                             int32_t device) {
  using namespace relu_kernel;
  const CudaDeviceScope device_scope(device);
  visit_backward(activation, dtype, [&](auto act, auto format) {
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(grad_in, kBytes, "grad_in");
    require_element_aligned(grad_out, kBytes, "grad_out");
    require_element_aligned(saved, kBytes, saved_name(activation));
    const void* inputs[] = {grad_out, saved};
    run_pass(dense_backward_op<decltype(act)::value, Fmt>(), inputs, grad_in, n * kBytes, device);
  });
}

void relu_strided_cuda(Activation activation, relu_kernel::ScalarType dtype, const void* in,
                       void* out, const StridedLayout& layout, int32_t device) {
  using namespace relu_kernel;
  const CudaDeviceScope device_scope(device);
  visit_forward(activation, dtype, [&](auto act, auto format) {
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(out, kBytes, "out");
    require_element_aligned(in, kBytes, "x");
    const void* inputs[] = {in};
    run_strided_pass(strided_forward_op<decltype(act)::value, Fmt>(), inputs, out, layout, device);
  });
}

void relu_backward_strided_cuda(Activation activation, relu_kernel::ScalarType dtype,
                                const void* grad_out, const void* saved, void* grad_in,
                                const StridedLayout& layout, int32_t device) {
  using namespace relu_kernel;
  const CudaDeviceScope device_scope(device);
  visit_backward(activation, dtype, [&](auto act, auto format) {
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(grad_in, kBytes, "grad_in");
    require_element_aligned(grad_out, kBytes, "grad_out");
    require_element_aligned(saved, kBytes, saved_name(activation));
    const void* inputs[] = {grad_out, saved};
    run_strided_pass(strided_backward_op<decltype(act)::value, Fmt>(), inputs, grad_in, layout,
                     device);
  });
}

void gated_strided_cuda(relu_kernel::Gate gate, relu_kernel::ScalarType dtype, const void* a,
                        const void* b, void* out, const StridedLayout& layout, double threshold,
                        int32_t device) {
  using namespace relu_kernel;
  const CudaDeviceScope device_scope(device);
  visit_gated(gate, dtype, [&](auto gate_constant, auto format) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(out, kBytes, "out");
    require_element_aligned(a, kBytes, "x");
    require_element_aligned(b, kBytes, "x");
    const GatedOp<kGate, Fmt> op{typename OpMath<Fmt>::Type(threshold)};
    const void* inputs[] = {a, b};
    run_strided_pass(op, inputs, out, layout, device);
  });
}

void gated_backward_strided_cuda(relu_kernel::Gate gate, relu_kernel::ScalarType dtype,
                                 const void* grad_out, const void* a, const void* b, void* grad_a,
                                 void* grad_b, const StridedLayout& layout, double threshold,
                                 int32_t device) {
  using namespace relu_kernel;
  const CudaDeviceScope device_scope(device);
  visit_gated(gate, dtype, [&](auto gate_constant, auto format) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(grad_a, kBytes, "grad_x");
    require_element_aligned(grad_b, kBytes, "grad_x");
    require_element_aligned(grad_out, kBytes, "grad_out");
    require_element_aligned(a, kBytes, "x");
    require_element_aligned(b, kBytes, "x");
    const auto t = typename OpMath<Fmt>::Type(threshold);
    const void* a_inputs[] = {grad_out, a, b};
    run_strided_pass(GatedGradAOp<kGate, Fmt>{t}, a_inputs, grad_a, layout, device);
    // The layout's first three operands: grad_b shares grad_a's strides, b is not read.
    const void* b_inputs[] = {grad_out, a};
    run_strided_pass(GatedGradBOp<kGate, Fmt>{t}, b_inputs, grad_b, layout, device);
  });
}
