"""The one call path of every op of the family. Eager: the binding's op, and for a call that
records a gradient OpFunction around it (the stable ABI has no C++ autograd). Traced by Dynamo:
the op's definition in torch ops, checked at trace time, which Inductor fuses with its
neighbours (the op would be opaque to it)."""

import functools
from typing import Callable, NamedTuple, Optional

import torch
from torch.autograd import forward_ad

from . import _dtypes
from . import _ops as _ops_module
from ._allocation import raise_torch_allocation_error

_is_grad_enabled = torch.is_grad_enabled
# Dynamo folds it to True while tracing; non-strict torch.export, which skips Dynamo, keeps the op.
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_increment_version = torch.autograd.graph.increment_version


class Op(NamedTuple):
    """One op: the binding's three ops and the definition, each taking the op's extra arguments
    (relu_and_mul's threshold) after its tensors."""

    name: str
    forward: Callable  # (x, *extra) -> result
    forward_out: Callable  # (out, x, *extra) -> None
    backward: Callable  # (grad, saved, *extra) -> grad_x
    traced: Callable  # forward under Dynamo, differentiable as written
    differentiable_backward: Callable  # backward with create_graph
    check: Callable  # (x, out): the binding's errors, typed as torch types them
    check_gradient: Callable  # (x): x requires grad in a dtype without a gradient
    saves_result: bool  # the gradient reads the result (relu) rather than x


_OPS: dict = {}


def records_gradient(x: torch.Tensor, other: Optional[torch.Tensor] = None) -> bool:
    # Inside a dual level the op would drop a tangent silently: OpFunction has no jvp and raises.
    requires_grad = x.requires_grad or (other is not None and other.requires_grad)
    return (requires_grad and _is_grad_enabled()) or forward_ad._current_level >= 0


class OpFunction(torch.autograd.Function):
    """One backward kernel pass; with create_graph, a backward differentiable again."""

    @staticmethod
    def forward(ctx, x, name, *extra):
        op = _OPS[name]
        result = op.forward(x, *extra)
        ctx.save_for_backward(result if op.saves_result else x)
        ctx.name, ctx.extra = name, extra
        return result

    @staticmethod
    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        op, nones = _OPS[ctx.name], (None,) * (1 + len(ctx.extra))
        if _is_grad_enabled() or forward_ad._current_level >= 0:
            return op.differentiable_backward(grad, saved, *ctx.extra), *nones
        try:
            return op.backward(grad, saved, *ctx.extra), *nones
        except RuntimeError as error:
            raise_torch_allocation_error(error, saved)
            raise


def _raise_out_requires_grad(name: str):
    # torch's own wording for out= ops, so users see one message whichever op they call.
    raise RuntimeError(
        f"{name}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def _traced(op: Op, x: torch.Tensor, out: Optional[torch.Tensor], extra: tuple) -> torch.Tensor:
    # At trace time, so before anything is written; no overlap check: the graph reads all of x
    # before it writes out.
    records = records_gradient(x, out)
    if out is not None and records:
        op.check(x, None)
        _raise_out_requires_grad(op.name)
    op.check(x, out)
    if out is not None:
        return out.copy_(op.traced(x, *extra))
    if records and x.requires_grad and x.dtype not in _dtypes.GRADIENT:
        op.check_gradient(x)
    return op.traced(x, *extra)


def binding_ops(ops, name: str) -> tuple:
    """ops.<name>, <name>_out and <name>_backward as the eager path calls them: a noarch variant's
    Python kernels directly (_noarch.eager_kernels), a compiled variant's ops."""
    if name in _ops_module.__dict__.get("eager", ()):
        return _ops_module.eager[name]
    return tuple(getattr(ops, name + suffix).default for suffix in ("", "_out", "_backward"))


def op_call(op: Op) -> Callable[[Callable], Callable]:
    """Decorates the public function's signature and docstring with the call path of `op`,
    name(x, out=None, *extra); the decorated body never runs."""
    _OPS[op.name] = op
    name, forward, forward_out, check = op.name, op.forward, op.forward_out, op.check

    def call(x: torch.Tensor, out: Optional[torch.Tensor] = None, *extra) -> torch.Tensor:
        try:
            if _is_dynamo_compiling():
                return _traced(op, x, out, extra)
            # records_gradient written out: every eager call runs these lines.
            if out is None:
                if (x.requires_grad and _is_grad_enabled()) or forward_ad._current_level >= 0:
                    if x.requires_grad and x.dtype not in _dtypes.GRADIENT:
                        op.check_gradient(x)  # torch lets float8 require grad
                    return OpFunction.apply(x, name, *extra)
                return forward(x, *extra) if extra else forward(x)  # no star call where none is needed
            if ((x.requires_grad or out.requires_grad) and _is_grad_enabled()) or forward_ad._current_level >= 0:
                _raise_out_requires_grad(name)
            if extra:
                forward_out(out, x, *extra)
            else:
                forward_out(out, x)
            _increment_version(out)  # as torch's out= ops: a saved tensor overwritten makes backward raise
            return out
        except AttributeError:
            if not isinstance(x, torch.Tensor) or not isinstance(out, (torch.Tensor, type(None))):
                raise TypeError(
                    f"{name}: x and out must be torch.Tensor (out may be None); got "
                    f"{type(x).__name__} and {type(out).__name__}"
                ) from None
            raise
        except ValueError:
            # The binding raises ValueError for every bad argument (std::invalid_argument);
            # the same check in Python gives a dtype mistake its TypeError, as torch does.
            try:
                check(x, out)
            except (TypeError, ValueError) as typed:
                raise typed from None
            raise
        except RuntimeError as error:
            raise_torch_allocation_error(error, x)
            raise

    return lambda signature: functools.wraps(signature)(call)
