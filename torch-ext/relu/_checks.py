"""What the binding rejects (torch-ext/argument_checks.h), in its words, with the type a user
expects (TypeError for a dtype, as torch raises): run at trace time, after the binding has
refused an eager call, and as the noarch ops' checks. tests/test_contract.py holds both
languages to one text."""

from typing import Optional

import torch

from . import _dtypes


# The dtypes each op takes, in the table's order (relu_squared: the dtypes with a gradient).
_ACCEPTED = {"relu": _dtypes.SUPPORTED_ORDERED, "relu_squared": _dtypes.GRADIENT_ORDERED}
# The tensor each backward reads beside grad_out (activations.h saved_name).
_SAVED = {"relu": "result", "relu_squared": "x"}


def check_arguments(x: torch.Tensor, out: Optional[torch.Tensor], op: str = "relu") -> None:
    """Raises the binding's error for op(x) or op(x, out=out), in the binding's order.
    Not checked: out partially overlapping x, which needs addresses (the traced graph reads
    all of x before it writes out, so it is safe there)."""
    if x.dtype not in _ACCEPTED[op]:
        raise TypeError(
            f"{op}: x has dtype {_dtypes.name(x.dtype)}; supported dtypes are "
            + ", ".join(map(_dtypes.name, _ACCEPTED[op]))
        )
    if out is None:
        return
    _check_like(out, x, op, "out")
    if out.shape != x.shape:
        raise ValueError(
            f"{op}: out has shape {list(out.shape)} but x has shape {list(x.shape)}; "
            "out must have x's shape (it is never resized)"
        )
    _check_distinct_elements(out, op)


def _check_like(t: torch.Tensor, like: torch.Tensor, op: str, what: str, like_name: str = "x") -> None:
    """`what` (out, grad_out) must have the dtype and device of `like` (x, or a backward's saved)."""
    if t.dtype != like.dtype:
        raise TypeError(
            f"{op}: {what} has dtype {_dtypes.name(t.dtype)} but {like_name} has dtype "
            f"{_dtypes.name(like.dtype)}; {what} must have {like_name}'s dtype"
        )
    if t.device != like.device:
        raise ValueError(f"{op}: {what} is on {t.device} but {like_name} is on {like.device}; "
                         f"{what} must be on {like_name}'s device")


def _check_distinct_elements(out: torch.Tensor, op: str) -> None:
    if any(size > 1 and stride == 0 for size, stride in zip(out.shape, out.stride())):
        raise ValueError(
            f"{op}: out has elements that share memory (an expand()ed or stride-0 view); "
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


def raise_partial_overlap(op: str = "relu") -> None:
    """The binding's error for two dense tensors that share memory without being the same
    elements; found by whoever has the addresses (the binding, the noarch ops)."""
    raise ValueError(
        f"{op}: out partially overlaps x; pass out=x for in place, or a tensor that does "
        "not share x's memory"
    )


def check_backward_arguments(grad_out: torch.Tensor, saved: torch.Tensor, op: str = "relu") -> None:
    """The binding's checks of <op>_backward, all ValueError as the op raises them (autograd
    calls it with what the forward checked; a direct op call can get it wrong). `saved` is
    relu's result or relu_squared's x."""
    name, saved_name = f"{op}_backward", _SAVED[op]
    if saved.dtype not in _dtypes.GRADIENT:
        raise ValueError(
            f"{name}: {saved_name} has dtype {_dtypes.name(saved.dtype)}; gradients exist for "
            + ", ".join(map(_dtypes.name, _dtypes.GRADIENT_ORDERED)) + " only"
        )
    try:
        _check_like(grad_out, saved, name, "grad_out", saved_name)
    except TypeError as error:  # the op raises ValueError for every mistake
        raise ValueError(str(error)) from None
    if grad_out.shape != saved.shape:
        raise ValueError(
            f"{name}: grad_out has shape {list(grad_out.shape)} but {saved_name} has shape "
            f"{list(saved.shape)}"
        )


def check_gated_arguments(x: torch.Tensor, out: Optional[torch.Tensor], op: str) -> None:
    """The binding's checks of a gated op (argument_checks.h), x [..., 2d] and out [..., d], in
    its order. Not checked: out overlapping x, which needs addresses."""
    if x.dtype not in _dtypes.GRADIENT:
        raise TypeError(
            f"{op}: x has dtype {_dtypes.name(x.dtype)}; supported dtypes are "
            + ", ".join(map(_dtypes.name, _dtypes.GRADIENT_ORDERED))
        )
    if x.dim() == 0 or x.shape[-1] % 2:
        raise ValueError(f"{op}: x has shape {list(x.shape)}; its last dimension must be even (x is [..., 2d])")
    if out is not None:
        _check_gated_half(out, x, op, "out")
        _check_distinct_elements(out, op)


def check_gated_backward_arguments(grad_out: torch.Tensor, x: torch.Tensor, op: str) -> None:
    """The binding's checks of <op>_backward, raised by the noarch ops as ValueError."""
    check_gated_arguments(x, None, op)
    _check_gated_half(grad_out, x, op, "grad_out")


def _check_gated_half(half: torch.Tensor, x: torch.Tensor, op: str, what: str) -> None:
    _check_like(half, x, op, what)
    want = [*x.shape[:-1], x.shape[-1] // 2]
    if list(half.shape) != want:
        raise ValueError(
            f"{op}: {what} has shape {list(half.shape)} but must have shape {want} "
            "(x's with the last dimension halved; it is never resized)"
        )


def raise_gated_overlap(op: str) -> None:
    raise ValueError(f"{op}: out overlaps x; pass a tensor that does not share x's memory")
