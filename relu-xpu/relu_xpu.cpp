// XPU backend (SYCL): the launch layer of the dense passes (backend_entry_points.h). What a
// work-item does and the launch shape are in relu_xpu_items.h, which the CPU tests run; element
// logic and the head / vectors / tail split are relu-common's, shared with CUDA.
// Kernels go to the queue of torch's current XPU stream of the tensors' device: no queue of our
// own, no host wait, no allocation, no device guard (a SYCL queue is bound to its device).
// Of torch it uses only the header-only dtype enum and one AOTI C shim function. Source only
// here: no SYCL compiler or Intel GPU (relu-xpu/README.md says what was checked).
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

// torch's current XPU stream of a device, as its sycl::queue* (a queue torch owns for the
// process). A libtorch C shim outside the stable-ABI set, hence the per-torch XPU build
// (build.toml); torch declares it only when built with USE_XPU, so it is declared here.
extern "C" int32_t aoti_torch_get_current_xpu_stream(int32_t device_index, void** ret_stream);

namespace {

using namespace relu_kernel;

// Functors rather than lambdas: the type names the kernel.
template <typename Ops>
struct ForwardKernel {
  VectorSplit split;
  const typename Ops::Storage* in;
  typename Ops::Storage* out;

  void operator()(sycl::nd_item<1> item) const {
    forward_item<Ops>(split, in, out, int64_t(item.get_global_linear_id()),
                      int64_t(item.get_global_range(0)));
  }
};

template <typename Ops>
struct BackwardKernel {
  VectorSplit split;
  const typename Ops::Storage* grad;
  const typename Ops::Storage* saved;
  typename Ops::Storage* grad_in;

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

// float64 arithmetic (relu_squared, the gated ops) is refused before submitting on a device
// without fp64, where the kernel would fail at launch.
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

// The arrays as the Storage the kernel moves (XpuOps), each checked to be aligned to it.
template <typename Ops>
const typename Ops::Storage* storage_of(const void* data, const char* name) {
  require_element_aligned(data, int(sizeof(typename Ops::Storage)), name);
  return static_cast<const typename Ops::Storage*>(data);
}

template <typename Ops>
typename Ops::Storage* mutable_storage_of(void* data, const char* name) {
  require_element_aligned(data, int(sizeof(typename Ops::Storage)), name);
  return static_cast<typename Ops::Storage*>(data);
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
    const auto* src = storage_of<Ops>(x, "x");
    auto* dst = mutable_storage_of<Ops>(out, "out");
    sycl::queue& queue = current_queue(device);
    require_device_arithmetic<kActivation, decltype(fmt)>(queue);
    const void* arrays[] = {src, dst};
    const VectorSplit split = split_dense(n, sizeof(typename Ops::Storage), arrays, 2);
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
    const auto* grad = storage_of<Ops>(grad_out, "grad_out");
    const auto* kept = storage_of<Ops>(saved, saved_name(activation));
    auto* dst = mutable_storage_of<Ops>(grad_in, "grad_in");
    sycl::queue& queue = current_queue(device);
    require_device_arithmetic<kActivation, decltype(fmt)>(queue);
    const void* arrays[] = {grad, kept, dst};
    const VectorSplit split = split_dense(n, sizeof(typename Ops::Storage), arrays, 3);
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
    const void* inputs[] = {storage_of<Op>(a, "x"), storage_of<Op>(b, "x")};
    auto* dst = mutable_storage_of<Op>(out, "out");
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
    using GradA = XpuGatedOp<kGate, Fmt, GatedPassKind::kGradA>;
    using GradB = XpuGatedOp<kGate, Fmt, GatedPassKind::kGradB>;
    const void* g = storage_of<GradA>(grad_out, "grad_out");
    const void* av = storage_of<GradA>(a, "x");
    const void* bv = storage_of<GradA>(b, "x");
    auto* da = mutable_storage_of<GradA>(grad_a, "grad_x");
    auto* db = mutable_storage_of<GradA>(grad_b, "grad_x");
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
