"""relu_squared: relu(x)**2 in one pass forward and one backward, and its autograd."""

from typing import Optional

import torch

from . import _definitions
from ._allocation import raise_torch_allocation_error
from ._checks import check_arguments
from ._ops import ops
from .functions import _is_dynamo_compiling, _records_gradient

_forward = ops.relu_squared.default
_forward_out = ops.relu_squared_out.default
_backward = ops.relu_squared_backward.default


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


def _raise_out_requires_grad():
    raise RuntimeError(
        "relu_squared(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def _relu_squared_traced(x: torch.Tensor, out: Optional[torch.Tensor]) -> torch.Tensor:
    """While Dynamo traces: the definition in torch ops, checked at trace time."""
    check_arguments(x, out, "relu_squared")
    if out is None:  # differentiable as written: autograd's gradient is the definition's
        return _definitions.relu_squared_forward(x)
    if _records_gradient(x, out):
        _raise_out_requires_grad()
    return out.copy_(_definitions.relu_squared_forward(x))


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
    try:
        if _is_dynamo_compiling():
            return _relu_squared_traced(x, out)
        if out is None:
            return _ReluSquaredFunction.apply(x) if _records_gradient(x) else _forward(x)
        if _records_gradient(x, out):
            _raise_out_requires_grad()
        _forward_out(out, x)
        torch.autograd.graph.increment_version(out)  # as torch's out= ops
        return out
    except AttributeError:
        if not isinstance(x, torch.Tensor) or not isinstance(out, (torch.Tensor, type(None))):
            raise TypeError(
                f"relu_squared: x and out must be torch.Tensor (out may be None); got "
                f"{type(x).__name__} and {type(out).__name__}"
            ) from None
        raise
    except ValueError:
        # The binding raises ValueError for every bad argument: the same check in Python
        # gives a dtype mistake its TypeError.
        try:
            check_arguments(x, out, "relu_squared")
        except (TypeError, ValueError) as typed:
            raise typed from None
        raise
    except RuntimeError as error:
        raise_torch_allocation_error(error, x)
        raise
