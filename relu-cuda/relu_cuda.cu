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

namespace {

using namespace relu_kernel;

// One relu or relu_squared pass in either direction: the dense forms for a dense walk, the
// strided kernels for a layout. names: out's, then the inputs', for the alignment errors.
template <bool kBackward, int kInputs>
void activation_pass(Activation activation, ScalarType dtype, const void* const (&inputs)[kInputs],
                     void* out, const char* const (&names)[kInputs + 1], Walk walk,
                     int32_t device) {
  const CudaDeviceScope device_scope(device);
  const auto pass = [&](auto act, auto format) {
    constexpr Activation kActivation = decltype(act)::value;
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(out, kBytes, names[0]);
    for (int k = 0; k < kInputs; ++k) require_element_aligned(inputs[k], kBytes, names[1 + k]);
    if constexpr (kBackward) {
      if (walk.layout == nullptr) {
        run_pass(dense_backward_op<kActivation, Fmt>(), inputs, out, walk.n * kBytes, device);
      } else {
        run_strided_pass(strided_backward_op<kActivation, Fmt>(), inputs, out, *walk.layout,
                         device);
      }
    } else if (walk.layout == nullptr) {
      run_pass(dense_forward_op<kActivation, Fmt>(), inputs, out, walk.n * kBytes, device);
    } else {
      run_strided_pass(strided_forward_op<kActivation, Fmt>(), inputs, out, *walk.layout, device);
    }
  };
  if constexpr (kBackward) {
    visit_backward(activation, dtype, pass);
  } else {
    visit_forward(activation, dtype, pass);
  }
}

// The gated passes over a layout (a dense walk as one row): out = gate(a) * b forward;
// backward grad_a from (grad_out, a, b) into out, then grad_b from (grad_out, a).
template <bool kBackward>
void gated_passes(Gate gate, ScalarType dtype, const void* grad_out, const void* a,
                  const void* b, void* out, void* grad_b, Walk walk, double threshold,
                  int32_t device) {
  if (walk.layout == nullptr) {
    const StridedLayout row = StridedLayout::dense(walk.n);
    return gated_passes<kBackward>(gate, dtype, grad_out, a, b, out, grad_b, Walk{0, &row},
                                   threshold, device);
  }
  const CudaDeviceScope device_scope(device);
  visit_gated(gate, dtype, [&](auto gate_constant, auto format) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(format);
    constexpr int kBytes = int(sizeof(typename Fmt::Storage));
    require_element_aligned(out, kBytes, kBackward ? "grad_x" : "out");
    if constexpr (kBackward) {
      require_element_aligned(grad_b, kBytes, "grad_x");
      require_element_aligned(grad_out, kBytes, "grad_out");
    }
    require_element_aligned(a, kBytes, "x");
    require_element_aligned(b, kBytes, "x");
    const auto t = typename OpMath<Fmt>::Type(threshold);
    const StridedLayout& layout = *walk.layout;
    if constexpr (kBackward) {
      const void* a_inputs[] = {grad_out, a, b};
      run_strided_pass(GatedPassOp<kGate, GatedPassKind::kGradA, Fmt>{t}, a_inputs, out, layout,
                       device);
      // The layout's first three operands: grad_b shares grad_a's strides, b is not read.
      const void* b_inputs[] = {grad_out, a};
      run_strided_pass(GatedPassOp<kGate, GatedPassKind::kGradB, Fmt>{t}, b_inputs, grad_b, layout,
                       device);
    } else {
      const void* inputs[] = {a, b};
      run_strided_pass(GatedPassOp<kGate, GatedPassKind::kForward, Fmt>{t}, inputs, out, layout,
                       device);
    }
  });
}

}  // namespace

template <>
void Backend<Device::kCuda>::forward(Activation activation, ScalarType dtype, const void* x,
                                     void* out, Walk walk, int32_t device) {
  const void* inputs[] = {x};
  activation_pass<false>(activation, dtype, inputs, out, {"out", "x"}, walk, device);
}

template <>
void Backend<Device::kCuda>::backward(Activation activation, ScalarType dtype,
                                      const void* grad_out, const void* saved, void* grad_in,
                                      Walk walk, int32_t device) {
  const void* inputs[] = {grad_out, saved};
  activation_pass<true>(activation, dtype, inputs, grad_in,
                        {"grad_in", "grad_out", saved_name(activation)}, walk, device);
}

template <>
void Backend<Device::kCuda>::gated_forward(Gate gate, ScalarType dtype, const void* a,
                                           const void* b, void* out, Walk walk,
                                           double threshold, int32_t device) {
  gated_passes<false>(gate, dtype, nullptr, a, b, out, nullptr, walk, threshold, device);
}

template <>
void Backend<Device::kCuda>::gated_backward(Gate gate, ScalarType dtype, const void* grad_out,
                                            const void* a, const void* b, void* grad_a,
                                            void* grad_b, Walk walk, double threshold,
                                            int32_t device) {
  gated_passes<true>(gate, dtype, grad_out, a, b, grad_a, grad_b, walk, threshold, device);
}
