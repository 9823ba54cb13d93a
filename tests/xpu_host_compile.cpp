// relu-xpu/relu_xpu.cpp as the host half of a SYCL build sees it. tests/test_xpu_source.py
// compiles this with g++ against the SYCL 2020 headers that Intel ships in the intel-sycl-rt
// wheel and torch's header-only headers. A host compiler does not instantiate kernel bodies
// (only the device compiler calls them), so the explicit instantiations below make g++
// type-check every kernel's operator() for every dtype.
#include "relu-xpu/relu_xpu.cpp"

#define RELU_INSTANTIATE_KERNELS(FORMAT)                              \
  template struct ReluKernel<relu_kernel::XpuOps<relu_kernel::FORMAT>>; \
  template struct ReluBackwardKernel<relu_kernel::XpuOps<relu_kernel::FORMAT>>;

RELU_INSTANTIATE_KERNELS(Float32Format)
RELU_INSTANTIATE_KERNELS(Float16Format)
RELU_INSTANTIATE_KERNELS(BFloat16Format)
RELU_INSTANTIATE_KERNELS(Float64Format)
RELU_INSTANTIATE_KERNELS(Int8Format)
RELU_INSTANTIATE_KERNELS(Int16Format)
RELU_INSTANTIATE_KERNELS(Int32Format)
RELU_INSTANTIATE_KERNELS(Int64Format)
RELU_INSTANTIATE_KERNELS(UInt8Format)
