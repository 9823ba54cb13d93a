"""relu_squared: relu(x)**2 in one pass forward and one backward."""

import functools
from typing import Optional

import torch

from ._checks import check_arguments
from ._definitions import relu_squared_backward, relu_squared_forward
from ._op_call import Op, binding_ops, op_call
from ._ops import ops

_check = functools.partial(check_arguments, op="relu_squared")


# Saves x, as many bytes as eager torch's saved relu(x).
@op_call(Op("relu_squared", *binding_ops(ops, "relu_squared"), relu_squared_forward, relu_squared_backward,
            _check, lambda x: _check(x, None), saves_result=False))
def relu_squared(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Squared ReLU: ``out = x > 0 ? x * x : 0`` elementwise, as ``F.relu(x).square()``.

    Computed in float32 (float64 for float64) and rounded once: NaN -> 0, -0.0 -> +0.0,
    +inf -> +inf, overflow -> inf.

    Args:
        x: any shape and layout, in a dtype relu has a gradient for (docs/support.md).
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
