// XPU backend (SYCL): the launch layer only. What each work-item does, the head / 16-byte
// words / tail split and the launch shape live in relu_xpu_items.h, which the CPU test suite
// runs; the element logic is relu-common/relu_element.h, shared with CPU and CUDA.
//
// Kernels go to the queue of PyTorch's current XPU stream on the tensors' device, in order
// with the other work on that stream: no queue of our own, no wait on the host, no
// allocation. Source only: this project has no SYCL compiler, Intel GPU or XPU build of
// torch; what has and has not been checked is in relu-xpu/README.md.
#include <ATen/core/Tensor.h>
#include <c10/xpu/XPUStream.h>
#include <sycl/sycl.hpp>

#include <cstdint>

#include "relu-common/relu_element.h"
#include "relu-xpu/relu_xpu_items.h"
#include "torch-ext/relu_dtypes.h"
#include "torch-ext/torch_binding.h"

namespace {

using namespace relu_kernel;

// Kernel functors rather than lambdas: the type names the kernel, one per format.
template <typename Ops>
struct ReluKernel {
  FlatSplit split;
  const typename Ops::Element* in;
  typename Ops::Element* out;

  void operator()(sycl::nd_item<1> item) const {
    relu_item<Ops>(split, in, out, int64_t(item.get_global_linear_id()),
                   int64_t(item.get_global_range(0)));
  }
};

template <typename Ops>
struct ReluBackwardKernel {
  FlatSplit split;
  const typename Ops::Element* grad;
  const typename Ops::Element* result;
  typename Ops::Element* grad_in;

  void operator()(sycl::nd_item<1> item) const {
    relu_backward_item<Ops>(split, grad, result, grad_in, int64_t(item.get_global_linear_id()),
                            int64_t(item.get_global_range(0)));
  }
};

// The current stream of `t`'s device, which need not be the current device.
sycl::queue& queue_for(const at::Tensor& t) {
  return c10::xpu::getCurrentXPUStream(t.device().index()).queue();
}

template <typename Kernel>
void launch(sycl::queue& queue, const FlatSplit& split, const Kernel& kernel) {
  const int64_t items = launch_items(split);
  if (items == 0) return;
  queue.parallel_for(sycl::nd_range<1>(sycl::range<1>(size_t(items)),
                                       sycl::range<1>(size_t(kWorkGroupSize))),
                     kernel);
}

// The tensors' memory as the element type the kernel moves (raw bits for float64 and the
// 16-bit floats; see XpuOps).
template <typename Ops>
const typename Ops::Element* elements_of(const at::Tensor& t) {
  return static_cast<const typename Ops::Element*>(t.const_data_ptr());
}

template <typename Ops>
typename Ops::Element* mutable_elements_of(at::Tensor& t) {
  return static_cast<typename Ops::Element*>(t.mutable_data_ptr());
}

}  // namespace

void relu_flat_xpu(const at::Tensor& x, at::Tensor& out) {
  visit_format(x.scalar_type(), [&](auto fmt) {
    using Ops = XpuOps<decltype(fmt)>;
    const auto* in = elements_of<Ops>(x);
    auto* dst = mutable_elements_of<Ops>(out);
    const void* arrays[] = {in, dst};
    const FlatSplit split = split_flat(x.numel(), sizeof(typename Ops::Element), arrays, 2);
    launch(queue_for(x), split, ReluKernel<Ops>{split, in, dst});
  });
}

void relu_backward_flat_xpu(const at::Tensor& grad_out, const at::Tensor& result,
                            at::Tensor& grad_in) {
  visit_format(result.scalar_type(), [&](auto fmt) {
    using Ops = XpuOps<decltype(fmt)>;
    const auto* grad = elements_of<Ops>(grad_out);
    const auto* res = elements_of<Ops>(result);
    auto* dst = mutable_elements_of<Ops>(grad_in);
    const void* arrays[] = {grad, res, dst};
    const FlatSplit split = split_flat(result.numel(), sizeof(typename Ops::Element), arrays, 3);
    launch(queue_for(result), split, ReluBackwardKernel<Ops>{split, grad, res, dst});
  });
}
