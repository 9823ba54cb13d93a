// The registration of fatrelu_and_mul.cu's one op, as kernels-community/activation's
// torch-ext/torch_binding.cpp registers it (schema and TORCH_BOX), under the benchmark's own
// namespace. Licensed as fatrelu_and_mul.cu (Apache-2.0).

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

void fatrelu_and_mul(torch::stable::Tensor& out, torch::stable::Tensor const& input, double threshold);

STABLE_TORCH_LIBRARY(kc_activation, ops) {
  ops.def("fatrelu_and_mul(Tensor! out, Tensor input, float threshold) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(kc_activation, CUDA, ops) {
  ops.impl("fatrelu_and_mul", TORCH_BOX(&fatrelu_and_mul));
}
