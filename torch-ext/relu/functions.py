"""The public function. Argument checks, layouts and autograd live in C++
(torch-ext/torch_binding.cpp): at small sizes the call path decides the latency, so this
wrapper does nothing but pick the op."""

from typing import Optional

import torch

from ._ops import add_op_namespace_prefix, ops

# Bound once: an OpOverload call skips the overload resolution of `ops.relu(...)`.
_relu = ops.relu.default
_relu_out = ops.relu_out.default


def relu(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """ReLU: ``out = x > 0 ? x : 0`` elementwise (NaN -> 0, -0.0 -> +0.0).

    Args:
        x: any shape and layout; float32, float16, bfloat16, float64, int8, int16, int32,
            int64 or uint8, on a device this build supports.
        out: optional destination with x's shape, dtype and device; ``out=x`` works in
            place. Partial overlap with x raises before anything is written.

    Returns:
        ``out`` if given, else a new tensor with x's layout. Differentiable when ``out`` is
        not given: the gradient is ``grad * (x > 0)``.
    """
    if out is None:
        return _relu(x)
    _relu_out(out, x)
    return out


# What kernels' function mapping (kernelize with a function) reads to allow training and
# torch.compile modes, as layers.ReLU declares for the layer route.
relu.has_backward = True
relu.can_torch_compile = True


@torch.library.register_fake(add_op_namespace_prefix("relu"))
def _relu_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.register_fake(add_op_namespace_prefix("relu_out"))
def _relu_out_fake(out: torch.Tensor, x: torch.Tensor) -> None:
    return None


@torch.library.register_fake(add_op_namespace_prefix("relu_backward"))
def _relu_backward_fake(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    # Mirrors relu_backward_kernel: the gradient takes result's strides when result is
    # non-overlapping and dense, else it is contiguous. empty_like keeps the strides of
    # exactly such tensors (and gives any other one new, dense strides), so comparing
    # strides tells the two cases apart with public API on every torch version.
    same_strides = torch.empty_like(result)
    if same_strides.stride() == result.stride():
        return same_strides
    return torch.empty_like(result, memory_format=torch.contiguous_format)
