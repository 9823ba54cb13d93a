"""The argument checks of relu() in Python: what the binding rejects (torch-ext/
argument_checks.h), in its words, with the exception type a user expects (TypeError for a
dtype, as torch raises). The traced path runs them at trace time, before anything is
written; the eager path runs them only after the binding has refused a call, to give its
error that type. tests/test_contract.py holds both languages to one text."""

from typing import Optional

import torch

from . import _dtypes


def check_arguments(x: torch.Tensor, out: Optional[torch.Tensor]) -> None:
    """Raises the binding's error for relu(x) or relu(x, out=out), in the binding's order.
    Not checked: out partially overlapping x, which needs addresses (the traced graph reads
    all of x before it writes out, so it is safe there)."""
    if x.dtype not in _dtypes.SUPPORTED:
        raise TypeError(
            f"relu: x has dtype {_dtypes.name(x.dtype)}; supported dtypes are "
            + ", ".join(map(_dtypes.name, _dtypes.SUPPORTED_ORDERED))
        )
    if out is None:
        return
    if out.dtype != x.dtype:
        raise TypeError(
            f"relu: out has dtype {_dtypes.name(out.dtype)} but x has dtype "
            f"{_dtypes.name(x.dtype)}; out must have x's dtype"
        )
    if out.device != x.device:
        raise ValueError(f"relu: out is on {out.device} but x is on {x.device}; out must be on x's device")
    if out.shape != x.shape:
        raise ValueError(
            f"relu: out has shape {list(out.shape)} but x has shape {list(x.shape)}; "
            "out must have x's shape (it is never resized)"
        )
    for size, stride in zip(out.shape, out.stride()):
        if size > 1 and stride == 0:
            raise ValueError(
                "relu: out has elements that share memory (an expand()ed or stride-0 view); "
                "pass a tensor whose elements are distinct"
            )


def check_gradient_dtype(x: torch.Tensor) -> None:
    """x requires grad: relu must have a gradient in its dtype. Caught at the call, not at
    backward time: torch lets float8 require grad. Python only (autograd lives here)."""
    if x.dtype not in _dtypes.GRADIENT:
        *most, last = map(_dtypes.name, _dtypes.GRADIENT_ORDERED)
        raise TypeError(
            f"relu: x ({x.dtype}) requires grad, but relu has a gradient for "
            f"{', '.join(most)} and {last} only; call it on x.detach() or under torch.no_grad()"
        )
