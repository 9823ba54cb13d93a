// CUDA backend: relu_flat_cuda and relu_backward_flat_cuda
// (relu-common/backend_entry_points.h), and the entry points of the strided passes (the gated
// ops' among them), whose kernels are in strided.cuh.
//
// Shape of a dense pass, the same for every dtype and both directions:
//   - the body moves whole 16-byte vectors (LDG.E.128 / STG.E.128), each computed by the
//     pass's op (relu_ops.cuh, which also says which op each dtype runs): int8 through
//     __vmaxs4, float16/bfloat16 through __hmax2 from sm_80 (else as bit patterns, as
//     float8), float/double by compare and select, the other ints as bit patterns, unsigned
//     ints as a copy of bytes;
//   - the elements before the first 16-byte boundary (head) and after the last whole
//     vector (tail), fewer than 16 / sizeof(element) each, go through the op's value one per
//     thread of block 0;
//   - the grid and the kernel's form are functions of the element count only
//     (launch_policy.h): while the pass stays in the L2, one tile per block with 32-bit
//     offsets, each vector predicated on its own bound (1 vector x 256 threads while the grid
//     fits one wave, else 2 x 128); from there up a grid-stride loop with 64-bit offsets, so
//     that any count, above 2^31 elements too, is covered;
//   - the vectors, head and tail follow out's 16-byte grid. An input whose address differs
//     from out's modulo 16 (a view at an odd offset and a fresh output) is read as the two
//     aligned 16-byte granules that hold each vector's bytes, shifted into place in
//     registers (memory.cuh, ShiftedVectors): 16-byte accesses on both sides, the same grid
//     and policy, and about the copy's time. A one-element-per-thread kernel here ran at
//     0.33-0.77x torch.relu (benchmarks/studies/misaligned).
// Everything runs on the current stream of the tensors' device, under a device guard, with
// no allocation and no host synchronisation, so the op can be captured in a CUDA graph.
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

// The elements before the first and after the last whole vector, one per thread of block 0
// (blockDim.x >= 32 > head + tail).
template <typename Op>
__device__ __forceinline__ void head_and_tail(const Pass<typename Op::Storage, Op::kInputs>& pass,
                                              const VectorSplit& split, const Op& op) {
  if (blockIdx.x != 0) return;
  const int64_t t = threadIdx.x;
  if (t < split.head) {
    pass.out[t] = value_at(op, pass.in, t);
  } else if (t - split.head < split.tail) {
    const int64_t i = split.tail_start + (t - split.head);
    pass.out[i] = value_at(op, pass.in, i);
  }
}

// The looping forms (kStream): a grid-stride loop over tiles of `blockDim.x * kVectors`
// vectors, 64-bit offsets, so that any count is covered; each thread loads all its vectors of
// a tile before it computes and stores any. `split` is out's; kShifted: some input's
// misalignment differs from out's (InputVectors). In place (out == in[0]) is safe in every
// form: each vector is read and written by the same thread, and an input that overlaps out is
// out itself (the binding rejects partial overlap), so never a shifted one.
template <typename Op, DenseForm kForm, bool kShifted>
__global__ void elementwise_vector16_loop(Pass<typename Op::Storage, Op::kInputs> pass,
                                          VectorSplit split, Op op) {
  constexpr int kInputs = Op::kInputs;
  constexpr int kVectors = DenseFormTraits<kForm>::kVectors;
  constexpr CacheHint kHint = DenseFormTraits<kForm>::kHint;
  head_and_tail(pass, split, op);
  const InputVectors<kInputs, kElementBytes<Op>, kShifted> in(pass.in, split.head);
  Vector16<uint32_t>* out = reinterpret_cast<Vector16<uint32_t>*>(pass.out + split.head);
  const int64_t n = split.vectors;
  const int64_t threads = blockDim.x;
  const int64_t tile = threads * kVectors;
  for (int64_t base = int64_t(blockIdx.x) * tile; base < n; base += int64_t(gridDim.x) * tile) {
    const int64_t first = base + threadIdx.x;
    Vector16<uint32_t> v[kVectors][kInputs];
    if (base + tile <= n) {  // a whole tile: no bound checks
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
#pragma unroll
        for (int k = 0; k < kInputs; ++k) {
          v[j][k] = in.template load<kHint>(k, first + j * threads);
        }
      }
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
        store_vector16<kHint>(out + first + j * threads, op.vector(v[j]));
      }
    } else {  // the grid's last, partial tile
#pragma unroll
      for (int j = 0; j < kVectors; ++j) {
        const int64_t i = first + j * threads;
        if (i < n) {
#pragma unroll
          for (int k = 0; k < kInputs; ++k) v[j][k] = in.template load<kHint>(k, i);
          store_vector16<kHint>(out + i, op.vector(v[j]));
        }
      }
    }
  }
}

// The tile forms: one tile per block (the grid covers the tensor: choose_dense_policy), as
// a plain Triton kernel: 32-bit offsets (the policy bounds the count), every vector's loads
// and store predicated on its own bound, no whole-tile branch and no early exit, so that the
// first load issues some 20 instructions in on sm_90 (a tile with 64-bit offsets and the head
// and tail first: some 40, PERFORMANCE.md); the head and tail come after the vectors, where
// they delay no load.
template <typename Op, DenseForm kForm, bool kShifted>
__global__ void elementwise_vector16_tile(Pass<typename Op::Storage, Op::kInputs> pass,
                                          VectorSplit split, Op op) {
  constexpr int kInputs = Op::kInputs;
  constexpr int kVectors = DenseFormTraits<kForm>::kVectors;
  constexpr CacheHint kHint = DenseFormTraits<kForm>::kHint;
  const InputVectors<kInputs, kElementBytes<Op>, kShifted> in(pass.in, split.head);
  Vector16<uint32_t>* out = reinterpret_cast<Vector16<uint32_t>*>(pass.out + split.head);
  const int32_t n = int32_t(split.vectors);
  const int32_t threads = int32_t(blockDim.x);
  const int32_t first = int32_t(blockIdx.x) * threads * kVectors + int32_t(threadIdx.x);
  Vector16<uint32_t> v[kVectors][kInputs];
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * threads < n) {
#pragma unroll
      for (int k = 0; k < kInputs; ++k) {
        v[j][k] = in.template load<kHint>(k, first + j * threads);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    if (first + j * threads < n) {
      store_vector16<kHint>(out + first + j * threads, op.vector(v[j]));
    }
  }
  head_and_tail(pass, split, op);
}

// The dense vector kernel of the policy's form, with the form's threads and the policy's grid.
template <typename Op, bool kShifted>
void launch_vector16(const Op& op, const Pass<typename Op::Storage, Op::kInputs>& pass,
                     const VectorSplit& split, const DensePolicy& policy, cudaStream_t stream) {
  visit_dense_form(policy.form, [&](auto form) {
    constexpr DenseForm kForm = decltype(form)::value;
    const unsigned blocks = unsigned(policy.blocks);
    const unsigned threads = unsigned(DenseFormTraits<kForm>::kThreads);
    if constexpr (DenseFormTraits<kForm>::kLoops) {
      elementwise_vector16_loop<Op, kForm, kShifted>
          <<<blocks, threads, 0, stream>>>(pass, split, op);
    } else {
      elementwise_vector16_tile<Op, kForm, kShifted>
          <<<blocks, threads, 0, stream>>>(pass, split, op);
    }
  });
  check_cuda(cudaGetLastError());
}

// `op` over `bytes` of dense operands (out and in[k] start at a multiple of their element
// size: the entry points check it), as elements of its own Storage.
template <typename Op>
void run_pass(const Op& op, const void* const (&in)[Op::kInputs], void* out, int64_t bytes,
              int32_t device) {
  using Storage = typename Op::Storage;
  Pass<Storage, Op::kInputs> pass{};
  for (int k = 0; k < Op::kInputs; ++k) pass.in[k] = static_cast<const Storage*>(in[k]);
  pass.out = static_cast<Storage*>(out);
  pass.n = bytes / int64_t(sizeof(Storage));
  // The vectors follow out's 16-byte grid; an input whose address differs from out's modulo
  // 16 is read through two aligned granules per vector (memory.cuh, ShiftedVectors).
  const int misalignment = misalignment16(pass.out);
  bool shifted = false;
  for (int k = 0; k < Op::kInputs; ++k) shifted = shifted || misalignment16(pass.in[k]) != misalignment;
  const VectorSplit split = split_for_vectors(pass.n, misalignment, kElementBytes<Op>);
  const DensePolicy policy =
      choose_dense_policy(device_traits(device), split.vectors, Op::kInputs + 1);
  const cudaStream_t stream = current_cuda_stream(device);
  if (shifted) {
    launch_vector16<Op, true>(op, pass, split, policy, stream);
  } else {
    launch_vector16<Op, false>(op, pass, split, policy, stream);
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
      run_strided_pass(GatedGradAOp<kGate, Fmt>{t}, a_inputs, out, layout, device);
      // The layout's first three operands: grad_b shares grad_a's strides, b is not read.
      const void* b_inputs[] = {grad_out, a};
      run_strided_pass(GatedGradBOp<kGate, Fmt>{t}, b_inputs, grad_b, layout, device);
    } else {
      const void* inputs[] = {a, b};
      run_strided_pass(GatedOp<kGate, Fmt>{t}, inputs, out, layout, device);
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
