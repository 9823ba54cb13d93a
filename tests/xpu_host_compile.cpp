// relu-xpu/relu_xpu.cpp as the host half of a SYCL build sees it. tests/test_xpu_source.py
// compiles this with g++ against the SYCL 2020 headers that Intel ships in the intel-sycl-rt
// wheel and torch's header-only headers. A host compiler does not instantiate kernel bodies
// (only the device compiler calls them), so the explicit instantiations below make g++
// type-check every kernel's operator() for every dtype.
#include "relu-xpu/relu_xpu.cpp"

#define RELU_INSTANTIATE_KERNELS(ACTIVATION, FORMAT)                                          \
  template struct ForwardKernel<                                                              \
      relu_kernel::XpuOps<relu_kernel::Activation::ACTIVATION, relu_kernel::FORMAT>>;         \
  template struct BackwardKernel<                                                             \
      relu_kernel::XpuOps<relu_kernel::Activation::ACTIVATION, relu_kernel::FORMAT>>;

RELU_INSTANTIATE_KERNELS(kRelu, Float32Format)
RELU_INSTANTIATE_KERNELS(kRelu, Float16Format)
RELU_INSTANTIATE_KERNELS(kRelu, BFloat16Format)
RELU_INSTANTIATE_KERNELS(kRelu, Float64Format)
RELU_INSTANTIATE_KERNELS(kRelu, Int8Format)
RELU_INSTANTIATE_KERNELS(kRelu, Int16Format)
RELU_INSTANTIATE_KERNELS(kRelu, Int32Format)
RELU_INSTANTIATE_KERNELS(kRelu, Int64Format)
RELU_INSTANTIATE_KERNELS(kRelu, UInt8Format)
RELU_INSTANTIATE_KERNELS(kReluSquared, Float32Format)
RELU_INSTANTIATE_KERNELS(kReluSquared, Float16Format)
RELU_INSTANTIATE_KERNELS(kReluSquared, BFloat16Format)
RELU_INSTANTIATE_KERNELS(kReluSquared, Float64Format)

#define RELU_INSTANTIATE_GATED_KERNEL(GATE, FORMAT, OUTPUT)                                     \
  template struct GatedKernel<relu_kernel::XpuGatedOp<                                         \
      relu_kernel::Gate::GATE, relu_kernel::FORMAT, relu_kernel::GatedPassKind::OUTPUT>>;
#define RELU_INSTANTIATE_GATED_KERNELS(GATE, FORMAT)  \
  RELU_INSTANTIATE_GATED_KERNEL(GATE, FORMAT, kForward) \
  RELU_INSTANTIATE_GATED_KERNEL(GATE, FORMAT, kGradA) \
  RELU_INSTANTIATE_GATED_KERNEL(GATE, FORMAT, kGradB)

RELU_INSTANTIATE_GATED_KERNELS(kReluAndMul, Float32Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluAndMul, Float16Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluAndMul, BFloat16Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluAndMul, Float64Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluSquaredAndMul, Float32Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluSquaredAndMul, Float16Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluSquaredAndMul, BFloat16Format)
RELU_INSTANTIATE_GATED_KERNELS(kReluSquaredAndMul, Float64Format)
