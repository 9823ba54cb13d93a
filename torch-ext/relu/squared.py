"""relu_squared: relu(x)**2 in one pass forward and one backward, and its autograd."""

from typing import Optional

import torch

from . import _definitions, _family
from ._allocation import raise_torch_allocation_error
from ._checks import check_arguments
from ._ops import ops

_forward = ops.relu_squared.default
_forward_out = ops.relu_squared_out.default
_backward = ops.relu_squared_backward.default


def _check(x, out):
    check_arguments(x, out, "relu_squared")


class _ReluSquaredFunction(torch.autograd.Function):
    """Eager: the ops. Saves x (as many bytes as eager torch's saved relu(x)); the backward
    kernel reads x and grad once and writes the gradient once. With create_graph the backward
    is the definition in torch ops, differentiable again."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if torch.is_grad_enabled():
            return _definitions.relu_squared_backward(grad, x)
        try:
            return _backward(grad, x)
        except RuntimeError as error:
            raise_torch_allocation_error(error, x)
            raise


def relu_squared(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Squared ReLU: ``out = x > 0 ? x * x : 0`` elementwise, as ``F.relu(x).square()``.

    Computed in float32 (float64 for float64) and rounded once: NaN -> 0, -0.0 -> +0.0,
    +inf -> +inf, overflow -> inf.

    Args:
        x: any shape and layout; float32, float16, bfloat16 or float64.
        out: optional destination with x's shape, dtype and device; ``out=x`` works in
            place. Partial overlap with x raises before anything is written.

    Returns:
        ``out`` if given, else a new tensor with x's layout. Differentiable when ``out`` is
        not given: the gradient is ``x > 0 ? 2 * x * grad : 0``.

    Raises:
        TypeError: another dtype, or ``out`` of another dtype than x.
        ValueError: ``out`` of another shape or device, partially overlapping x, or with
            repeated elements.
        RuntimeError: ``out`` given while x or out requires grad (as torch's out= ops).
    """
    return _family.call("relu_squared", x, out, _check, _forward, _forward_out,
                        _definitions.relu_squared_forward, _ReluSquaredFunction.apply)
