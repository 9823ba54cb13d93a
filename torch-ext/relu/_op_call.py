"""The one call path every op of the family shares. Eager: the binding's op (no C++ autograd in
the stable ABI, so a call that records a gradient goes through OpFunction); traced by Dynamo:
the op's definition in torch ops, checked at trace time, which Inductor fuses with its
neighbours (the op would be opaque to it)."""

from typing import Callable, NamedTuple, Optional

import torch
from torch.autograd import forward_ad

from . import _dtypes
from ._allocation import raise_torch_allocation_error

_is_grad_enabled = torch.is_grad_enabled
# Dynamo folds it to True while tracing; non-strict torch.export, which skips Dynamo, keeps the op.
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_increment_version = torch.autograd.graph.increment_version


class Op(NamedTuple):
    """One op of the family: the binding's ops and the definition in torch ops, each taking
    the op's extra arguments (relu_and_mul's threshold) after its tensors."""

    name: str
    forward: Callable  # (x, *extra) -> result
    forward_out: Callable  # (out, x, *extra) -> None
    backward: Callable  # (grad, saved, *extra) -> grad_x
    defined: Callable  # forward as traced
    defined_backward: Callable  # backward as traced or differentiated again
    check: Callable  # (x, out): the binding's errors, typed as torch types them
    check_gradient: Callable  # (x): x requires grad in a dtype without one
    saves_result: bool  # the gradient reads the result (relu) rather than x


_OPS: dict = {}


def records_gradient(x: torch.Tensor, other: Optional[torch.Tensor] = None) -> bool:
    # Inside a dual level the op would drop a tangent silently: OpFunction has no jvp and raises.
    requires_grad = x.requires_grad or (other is not None and other.requires_grad)
    return (requires_grad and _is_grad_enabled()) or forward_ad._current_level >= 0


class OpFunction(torch.autograd.Function):
    """One backward kernel pass; with create_graph, and under torch.compile, the backward is the
    definition in torch ops: differentiable again, and fused by Inductor."""

    @staticmethod
    def forward(ctx, x, name, *extra):
        op = _OPS[name]
        result = op.defined(x, *extra) if _is_dynamo_compiling() else op.forward(x, *extra)
        ctx.save_for_backward(result if op.saves_result else x)
        ctx.name, ctx.extra = name, extra
        return result

    @staticmethod
    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        op, nones = _OPS[ctx.name], (None,) * (1 + len(ctx.extra))
        if _is_grad_enabled() or _is_dynamo_compiling():
            return op.defined_backward(grad, saved, *ctx.extra), *nones
        try:
            return op.backward(grad, saved, *ctx.extra), *nones
        except RuntimeError as error:
            raise_torch_allocation_error(error, saved)
            raise


def _differentiable(op: Op, x: torch.Tensor, extra: tuple) -> torch.Tensor:
    if x.requires_grad and x.dtype not in _dtypes.GRADIENT:
        op.check_gradient(x)  # torch lets float8 require grad
    return OpFunction.apply(x, op.name, *extra)


def _raise_out_requires_grad(name: str):
    # torch's own wording for out= ops, so users see one message whichever op they call.
    raise RuntimeError(
        f"{name}(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def _traced(op: Op, x: torch.Tensor, out: Optional[torch.Tensor], extra: tuple) -> torch.Tensor:
    # Checked at trace time, so before anything is written; out partially overlapping x needs
    # no check here: the graph reads all of x before it writes out.
    records = records_gradient(x, out)
    if out is not None and records:
        op.check(x, None)
        _raise_out_requires_grad(op.name)
    op.check(x, out)
    if out is None:
        return _differentiable(op, x, extra) if records else op.defined(x, *extra)
    return out.copy_(op.defined(x, *extra))


def op_call(ops, name: str, defined: Callable, defined_backward: Callable, check: Callable,
            check_gradient: Callable, saves_result: bool) -> Callable:
    """<name>(x, out=None, *extra) as the public function runs it, over ops.<name>, <name>_out and
    <name>_backward."""
    binding = (getattr(ops, name + suffix).default for suffix in ("", "_out", "_backward"))
    op = _OPS[name] = Op(name, *binding, defined, defined_backward, check, check_gradient, saves_result)
    name, forward, forward_out, check = op.name, op.forward, op.forward_out, op.check

    def call(x: torch.Tensor, out: Optional[torch.Tensor] = None, *extra) -> torch.Tensor:
        try:
            if _is_dynamo_compiling():
                return _traced(op, x, out, extra)
            # records_gradient written out: every eager call runs this line.
            if out is None:
                if (x.requires_grad and _is_grad_enabled()) or forward_ad._current_level >= 0:
                    return _differentiable(op, x, extra)
                return forward(x, *extra)
            if ((x.requires_grad or out.requires_grad) and _is_grad_enabled()) or forward_ad._current_level >= 0:
                _raise_out_requires_grad(name)
            forward_out(out, x, *extra)
            # As torch's out= ops: a saved tensor overwritten must make backward raise.
            _increment_version(out)
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

    return call
