"""The gated ReLU ops, x [..., 2d] -> [..., d]: relu_and_mul (ReGLU, FATReLU's threshold
included) and relu_squared_and_mul (squared ReGLU), one pass forward, and their autograd."""

from typing import Optional

import torch

from . import _definitions, _family
from ._allocation import raise_torch_allocation_error
from ._checks import check_gated_arguments
from ._ops import ops

# name -> (forward, forward into out, backward) as op(..., threshold): the squared ops take none.
_OPS = {
    "relu_and_mul": (ops.relu_and_mul.default, ops.relu_and_mul_out.default, ops.relu_and_mul_backward.default),
    "relu_squared_and_mul": (
        lambda x, threshold: ops.relu_squared_and_mul.default(x),
        lambda out, x, threshold: ops.relu_squared_and_mul_out.default(out, x),
        lambda grad, x, threshold: ops.relu_squared_and_mul_backward.default(grad, x),
    ),
}


class _GatedFunction(torch.autograd.Function):
    """Eager: the ops. Saves x, as eager torch keeps both halves; the backward reads grad and x
    and writes grad_x. With create_graph the backward is the definition in torch ops,
    differentiable again."""

    @staticmethod
    def forward(ctx, x, gate, threshold):
        ctx.save_for_backward(x)
        ctx.gate, ctx.threshold = gate, threshold
        return _OPS[gate][0](x, threshold)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if torch.is_grad_enabled():
            return _definitions.gated_backward(grad, x, ctx.gate, ctx.threshold), None, None
        try:
            return _OPS[ctx.gate][2](grad, x, ctx.threshold), None, None
        except RuntimeError as error:
            raise_torch_allocation_error(error, x)
            raise


def _gated(gate: str, x: torch.Tensor, out: Optional[torch.Tensor], threshold: float) -> torch.Tensor:
    forward, forward_out, _ = _OPS[gate]
    return _family.call(
        gate, x, out, lambda t, o: check_gated_arguments(t, o, gate), lambda t: forward(t, threshold),
        lambda o, t: forward_out(o, t, threshold), lambda t: _definitions.gated_forward(t, gate, threshold),
        lambda t: _GatedFunction.apply(t, gate, threshold))


def relu_and_mul(x: torch.Tensor, out: Optional[torch.Tensor] = None, threshold: float = 0.0) -> torch.Tensor:
    """ReGLU, and FATReLU-and-mul with a threshold: ``out = (a > threshold ? a : 0) * b``, where
    ``a = x[..., :d]`` and ``b = x[..., d:]``.

    Computed in float32 (float64 for float64) and rounded once; ``threshold`` is taken in that
    type. NaN in a gives 0 * b.

    Args:
        x: ``[..., 2d]``, any layout; float32, float16, bfloat16 or float64.
        out: optional ``[..., d]`` destination of x's dtype and device, sharing no memory with x.
        threshold: the gate's threshold; 0.0 is ReLU.

    Returns:
        ``out`` if given, else a new ``[..., d]`` tensor. Differentiable when ``out`` is not
        given: ``grad_a = a > threshold ? grad * b : 0``, ``grad_b = grad * gate(a)``.

    Raises:
        TypeError: another dtype, or ``out`` of another dtype than x.
        ValueError: an odd last dimension; ``out`` of the wrong shape or device, overlapping x,
            or with repeated elements.
        RuntimeError: ``out`` given while x or out requires grad (as torch's out= ops).
    """
    return _gated("relu_and_mul", x, out, float(threshold))


def relu_squared_and_mul(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Squared ReGLU: ``out = (a > 0 ? a * a : 0) * b``, where ``a = x[..., :d]`` and
    ``b = x[..., d:]``, computed in float32 (float64 for float64) in the order ``(a * a) * b``
    and rounded once.

    Args, returns and errors as :func:`relu_and_mul`; the gradient is
    ``grad_a = a > 0 ? ((2 * a) * b) * grad : 0``, ``grad_b = grad * gate(a)``.
    """
    return _gated("relu_squared_and_mul", x, out, 0.0)
