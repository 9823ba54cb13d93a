// XPU backend (SYCL): relu_flat_xpu, relu_backward_flat_xpu and the gated ops' flat passes
// (relu-common/backend_entry_points.h), the launch layer only. What each work-item does and
// the launch shape live in relu_xpu_items.h, which the CPU test suite runs; the element logic
// (relu_element.h), the head / 16-byte vectors / tail split and the alignment check
// (vector16.h) are relu-common's, shared with CUDA.
//
// Kernels go to the queue of PyTorch's current XPU stream on the tensors' device, in order
// with the other work on that stream: no queue of our own, no wait on the host, no
// allocation. No device guard either: a SYCL queue is bound to its device, so a submission
// does not depend on which device is current (CUDA's launches do).
//
// Nothing of torch's C++ API (ATen, c10): torch's header-only dtype enum and one C function
// of libtorch, the AOTI shim below. Source only: this project has no SYCL compiler, Intel GPU
// or XPU build of torch; what has and has not been checked is in relu-xpu/README.md.
#include <sycl/sycl.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "relu-common/activations.h"
#include "relu-common/backend_entry_points.h"
#include "relu-common/gated_element.h"
#include "relu-common/relu_dtypes.h"
#include "relu-common/relu_element.h"
#include "relu-common/vector16.h"
#include "relu-xpu/relu_xpu_items.h"

// torch's current XPU stream of a device, as a pointer to its sycl::queue: torch's
// shim_xpu.cpp sets *ret_stream = &at::xpu::getCurrentXPUStream(device_index).queue(), a
// queue owned by torch's per-device stream pool, alive as long as the process (AOTInductor's
// generated code casts the same value to sycl::queue*). Returns 0 (AOTI_TORCH_SUCCESS) or an
// error code. A C shim function of libtorch, but not one of the stable-ABI set: that is why
// the XPU variant is built per torch version (build.toml). torch declares it in
// torch/csrc/inductor/aoti_torch/c/shim_xpu.h only when torch itself is built with USE_XPU
// (and that header includes ATen/Config.h), so it is declared here.
extern "C" int32_t aoti_torch_get_current_xpu_stream(int32_t device_index, void** ret_stream);

namespace {

using namespace relu_kernel;

// Kernel functors rather than lambdas: the type names the kernel, one per activation and
// format (XpuOps).
template <typename Ops>
struct ForwardKernel {
  VectorSplit split;
  const typename Ops::Element* in;
  typename Ops::Element* out;

  void operator()(sycl::nd_item<1> item) const {
    forward_item<Ops>(split, in, out, int64_t(item.get_global_linear_id()),
                      int64_t(item.get_global_range(0)));
  }
};

template <typename Ops>
struct BackwardKernel {
  VectorSplit split;
  const typename Ops::Element* grad;
  const typename Ops::Element* saved;
  typename Ops::Element* grad_in;

  void operator()(sycl::nd_item<1> item) const {
    backward_item<Ops>(split, grad, saved, grad_in, int64_t(item.get_global_linear_id()),
                       int64_t(item.get_global_range(0)));
  }
};

template <typename Op>
struct GatedKernel {
  GatedPass<Op> pass;

  void operator()(sycl::nd_item<1> item) const {
    gated_item<Op>(pass, int64_t(item.get_global_linear_id()), int64_t(item.get_global_range(0)));
  }
};

// The queue of the current stream of `device`, which need not be the current device.
sycl::queue& current_queue(int32_t device) {
  void* queue = nullptr;
  if (aoti_torch_get_current_xpu_stream(device, &queue) != 0 || queue == nullptr) {
    throw std::runtime_error("relu: torch could not give the current XPU stream of the "
                             "tensors' device");
  }
  return *static_cast<sycl::queue*>(queue);
}

// relu_squared and the gated ops on float64 compute in double (relu's float64 kernels use
// none): refused before anything is submitted on a device without fp64, where the kernel would
// fail at launch.
template <typename Fmt>
void require_double_arithmetic(sycl::queue& queue, const char* op_name) {
  if constexpr (std::is_same<Fmt, Float64Format>::value) {
    if (!queue.get_device().has(sycl::aspect::fp64)) {
      throw std::invalid_argument(std::string(op_name) + ": this XPU has no float64 arithmetic; "
                                  "pass x as float32, float16 or bfloat16");
    }
  }
}

template <Activation kActivation, typename Fmt>
void require_device_arithmetic(sycl::queue& queue) {
  if constexpr (kActivation == Activation::kReluSquared) {
    require_double_arithmetic<Fmt>(queue, "relu_squared");
  }
}

template <typename Kernel>
void launch(sycl::queue& queue, const VectorSplit& split, const Kernel& kernel) {
  const int64_t items = launch_items(split);
  if (items == 0) return;
  queue.parallel_for(sycl::nd_range<1>(sycl::range<1>(size_t(items)),
                                       sycl::range<1>(size_t(kWorkGroupSize))),
                     kernel);
}

// The arrays as the element type the kernel moves (raw bits for the 16-bit floats, and for
// relu's float64; see XpuOps), each checked to start at a multiple of its element size
// (relu-common/vector16.h), before anything is submitted.
template <typename Ops>
const typename Ops::Element* elements_of(const void* data, const char* name) {
  require_element_aligned(data, int(sizeof(typename Ops::Element)), name);
  return static_cast<const typename Ops::Element*>(data);
}

template <typename Ops>
typename Ops::Element* mutable_elements_of(void* data, const char* name) {
  require_element_aligned(data, int(sizeof(typename Ops::Element)), name);
  return static_cast<typename Ops::Element*>(data);
}

// XPU walks dense operands only (Backend::kWalksLayouts): the binding copies others first.
int64_t dense_count(Walk walk) {
  if (walk.layout != nullptr) throw std::logic_error("relu: the XPU backend takes dense passes");
  return walk.n;
}

}  // namespace

template <>
void Backend<Device::kXpu>::forward(Activation activation, ScalarType dtype, const void* x,
                                    void* out, Walk walk, int32_t device) {
  const int64_t n = dense_count(walk);
  visit_forward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Ops = XpuOps<kActivation, decltype(fmt)>;
    const auto* src = elements_of<Ops>(x, "x");
    auto* dst = mutable_elements_of<Ops>(out, "out");
    sycl::queue& queue = current_queue(device);
    require_device_arithmetic<kActivation, decltype(fmt)>(queue);
    const void* arrays[] = {src, dst};
    const VectorSplit split = split_flat(n, sizeof(typename Ops::Element), arrays, 2);
    launch(queue, split, ForwardKernel<Ops>{split, src, dst});
  });
}

template <>
void Backend<Device::kXpu>::backward(Activation activation, ScalarType dtype,
                                     const void* grad_out, const void* saved, void* grad_in,
                                     Walk walk, int32_t device) {
  const int64_t n = dense_count(walk);
  visit_backward(activation, dtype, [&](auto act, auto fmt) {
    constexpr Activation kActivation = decltype(act)::value;
    using Ops = XpuOps<kActivation, decltype(fmt)>;
    const auto* grad = elements_of<Ops>(grad_out, "grad_out");
    const auto* kept = elements_of<Ops>(saved, saved_name(activation));
    auto* dst = mutable_elements_of<Ops>(grad_in, "grad_in");
    sycl::queue& queue = current_queue(device);
    require_device_arithmetic<kActivation, decltype(fmt)>(queue);
    const void* arrays[] = {grad, kept, dst};
    const VectorSplit split = split_flat(n, sizeof(typename Ops::Element), arrays, 3);
    launch(queue, split, BackwardKernel<Ops>{split, grad, kept, dst});
  });
}

template <>
void Backend<Device::kXpu>::gated_forward(Gate gate, ScalarType dtype, const void* a,
                                          const void* b, void* out, Walk walk, double threshold,
                                          int32_t device) {
  const int64_t n = dense_count(walk);
  visit_gated(gate, dtype, [&](auto gate_constant, auto fmt) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(fmt);
    using Op = XpuGatedOp<kGate, Fmt>;
    const void* inputs[] = {elements_of<Op>(a, "x"), elements_of<Op>(b, "x")};
    auto* dst = mutable_elements_of<Op>(out, "out");
    sycl::queue& queue = current_queue(device);
    require_double_arithmetic<Fmt>(queue, gate_name(gate));
    const GatedPass<Op> pass =
        gated_pass(Op{typename OpMath<Fmt>::Type(threshold)}, inputs, dst, n);
    launch(queue, pass.split, GatedKernel<Op>{pass});
  });
}

template <>
void Backend<Device::kXpu>::gated_backward(Gate gate, ScalarType dtype, const void* grad_out,
                                           const void* a, const void* b, void* grad_a,
                                           void* grad_b, Walk walk, double threshold,
                                           int32_t device) {
  const int64_t n = dense_count(walk);
  visit_gated(gate, dtype, [&](auto gate_constant, auto fmt) {
    constexpr Gate kGate = decltype(gate_constant)::value;
    using Fmt = decltype(fmt);
    using GradA = XpuGatedGradAOp<kGate, Fmt>;
    using GradB = XpuGatedGradBOp<kGate, Fmt>;
    const void* g = elements_of<GradA>(grad_out, "grad_out");
    const void* av = elements_of<GradA>(a, "x");
    const void* bv = elements_of<GradA>(b, "x");
    auto* da = mutable_elements_of<GradA>(grad_a, "grad_x");
    auto* db = mutable_elements_of<GradA>(grad_b, "grad_x");
    sycl::queue& queue = current_queue(device);
    require_double_arithmetic<Fmt>(queue, gate_name(gate));
    const auto t = typename OpMath<Fmt>::Type(threshold);
    const void* a_inputs[] = {g, av, bv};
    const GatedPass<GradA> a_pass = gated_pass(GradA{t}, a_inputs, da, n);
    const void* b_inputs[] = {g, av};
    const GatedPass<GradB> b_pass = gated_pass(GradB{t}, b_inputs, db, n);
    launch(queue, a_pass.split, GatedKernel<GradA>{a_pass});
    launch(queue, b_pass.split, GatedKernel<GradB>{b_pass});
  });
}
