"""The call path relu_squared and the gated ops share: eager calls go to the op, calls that
record a gradient through the op's autograd Function, traced calls (torch.compile) to its
definition in torch ops, which Inductor fuses; bad arguments raise as relu's do."""

from typing import Callable, Optional

import torch

from ._allocation import raise_torch_allocation_error
from .functions import _is_dynamo_compiling, _records_gradient


def call(op: str, x: torch.Tensor, out: Optional[torch.Tensor], check: Callable, forward: Callable,
         forward_out: Callable, definition: Callable, differentiable: Callable) -> torch.Tensor:
    """op(x, out=out). check(x, out): the binding's checks in Python; forward(x) and
    forward_out(out, x): the ops; definition(x): the same in torch ops; differentiable(x): the
    op's autograd Function."""
    try:
        if _is_dynamo_compiling():
            check(x, out)  # at trace time, before anything is written
            if out is None:  # differentiable as written: autograd's gradient is the definition's
                return definition(x)
        elif out is None:
            return differentiable(x) if _records_gradient(x) else forward(x)
        if _records_gradient(x, out):
            raise RuntimeError(
                f"{op}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        if _is_dynamo_compiling():
            return out.copy_(definition(x))
        forward_out(out, x)
        torch.autograd.graph.increment_version(out)  # as torch's out= ops
        return out
    except AttributeError:
        if not isinstance(x, torch.Tensor) or not isinstance(out, (torch.Tensor, type(None))):
            raise TypeError(
                f"{op}: x and out must be torch.Tensor (out may be None); got "
                f"{type(x).__name__} and {type(out).__name__}"
            ) from None
        raise
    except ValueError:
        try:  # the binding raises ValueError for every bad argument; a dtype mistake is a TypeError
            check(x, out)
        except (TypeError, ValueError) as typed:
            raise typed from None
        raise
    except RuntimeError as error:
        raise_torch_allocation_error(error, x)  # an out-of-memory as torch words it
        raise
