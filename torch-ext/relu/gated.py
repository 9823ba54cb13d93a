"""The gated ReLU ops, x [..., 2d] -> [..., d]: relu_and_mul (ReGLU, FATReLU's threshold
included) and relu_squared_and_mul (squared ReGLU), one pass forward and one backward."""

import functools
from typing import Optional

import torch

from ._checks import check_gated_arguments
from ._definitions import gated_backward, gated_forward
from ._op_call import Op, binding_ops, op_call
from ._ops import ops


def _gated_op(name: str) -> Op:
    # Saves x, as eager torch keeps both halves. relu_and_mul's ops take the threshold, the
    # squared ones none (the definitions' default, 0.0).
    check = functools.partial(check_gated_arguments, op=name)
    return Op(name, *binding_ops(ops, name), functools.partial(gated_forward, name),
              functools.partial(gated_backward, name), check, lambda x: check(x, None), saves_result=False)


@op_call(_gated_op("relu_and_mul"))
def _relu_and_mul(x, out, threshold):
    """The call path; relu_and_mul gives threshold its float."""


def relu_and_mul(x: torch.Tensor, out: Optional[torch.Tensor] = None, threshold: float = 0.0) -> torch.Tensor:
    """ReGLU, and FATReLU-and-mul with a threshold: ``out = (a > threshold ? a : 0) * b``, where
    ``a = x[..., :d]`` and ``b = x[..., d:]``.

    Computed in float32 (float64 for float64) and rounded once; ``threshold`` is taken in that
    type. NaN in a gives 0 * b.

    Args:
        x: ``[..., 2d]``, any layout, in a dtype relu has a gradient for (docs/support.md).
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
    return _relu_and_mul(x, out, float(threshold))


@op_call(_gated_op("relu_squared_and_mul"))
def relu_squared_and_mul(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Squared ReGLU: ``out = (a > 0 ? a * a : 0) * b``, where ``a = x[..., :d]`` and
    ``b = x[..., d:]``, computed in float32 (float64 for float64) in the order ``(a * a) * b``
    and rounded once.

    Args, returns and errors as :func:`relu_and_mul`; the gradient is
    ``grad_a = a > 0 ? ((2 * a) * b) * grad : 0``, ``grad_b = grad * gate(a)``.
    """
