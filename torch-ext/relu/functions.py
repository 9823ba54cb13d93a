"""relu(), and what the binding's ops need in Python: fake kernels for tracing, and the Autograd
key's fallthrough (the stable ABI cannot build a graph node; the public functions carry the
gradient)."""

from typing import Optional

import torch

from . import _dtypes
from ._allocation import raise_torch_allocation_error
from ._checks import check_arguments, check_gradient_dtype
from ._op_call import Op, binding_ops, op_call, records_gradient
from ._ops import add_op_namespace_prefix, ops

_relu_backward = ops.relu_backward.default


class _ReluTracedFunction(torch.autograd.Function):
    """The compiled gradient from the result, as relu_backward takes it: autograd of
    where(x > 0, x, 0) would also keep the mask x > 0, a byte per element held for backward."""

    @staticmethod
    def forward(ctx, x):
        result = torch.where(x > 0, x, 0)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return torch.where(result > 0, grad, 0)


def _traced(x: torch.Tensor) -> torch.Tensor:
    # By what aten can do: unsigned is never negative (and has no CPU comparison past uint8);
    # float8 has no CPU comparison and Inductor cannot promote it in where: it keeps the op.
    if x.dtype in _dtypes.UNSIGNED:
        return x.clone()
    if x.dtype in _dtypes.WHERE:
        return _ReluTracedFunction.apply(x) if records_gradient(x) else torch.where(x > 0, x, 0)
    return ops.relu.default(x)


class _ReluBackwardFunction(torch.autograd.Function):
    """relu_backward, differentiable again (gradient penalties, Hessian-vector products): linear
    in grad_out with the same mask, and flat in result."""

    @staticmethod
    def forward(ctx, grad_out, result):
        ctx.save_for_backward(result)
        return _relu_backward(grad_out, result)

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return _differentiable_backward(grad, result), None


def _differentiable_backward(grad: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    try:
        if records_gradient(grad, result):
            return _ReluBackwardFunction.apply(grad, result)
        return _relu_backward(grad, result)
    except RuntimeError as error:
        raise_torch_allocation_error(error, result)
        raise


@op_call(Op("relu", *binding_ops(ops, "relu"), _traced, _differentiable_backward, check_arguments,
            check_gradient_dtype, saves_result=True))
def relu(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """ReLU: ``out = x > 0 ? x : 0`` elementwise (NaN -> 0, -0.0 -> +0.0).

    Args:
        x: any shape and layout, in any dtype of the table in docs/support.md ("Backends,
            torch versions and dtypes"), on the CPU or a device this build supports.
            Gradients for the dtypes that table gives one; unsigned dtypes come back
            unchanged (relu is the identity there).
        out: optional destination with x's shape, dtype and device; ``out=x`` works in
            place. Partial overlap with x raises before anything is written.

    Returns:
        ``out`` if given, else a new tensor with x's layout. Differentiable when ``out`` is
        not given: the gradient is ``grad * (x > 0)``.

    Raises:
        TypeError: an unsupported dtype, or ``out`` of another dtype than x.
        ValueError: ``out`` of another shape or device, partially overlapping x, or with
            repeated elements.
        RuntimeError: ``out`` given while x or out requires grad (as torch's out= ops).
    """


# What kernels' function mapping (kernelize with a function) reads, as layers.ReLU declares.
relu.has_backward = True
relu.can_torch_compile = True

# A direct op call then costs no autograd fallback, and its output simply does not require
# grad, instead of the default fallback's warning at backward time.
_fallthrough = torch.library.Library(ops.name, "IMPL")
for _op in ("relu", "relu_squared", "relu_and_mul", "relu_squared_and_mul"):
    for _suffix in ("", "_out", "_backward"):
        _fallthrough.impl(_op + _suffix, torch.library.fallthrough_kernel, "Autograd")


@torch.library.register_fake(add_op_namespace_prefix("relu"))
def _relu_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.register_fake(add_op_namespace_prefix("relu_out"))
def _relu_out_fake(out: torch.Tensor, x: torch.Tensor) -> None:
    return None


@torch.library.register_fake(add_op_namespace_prefix("relu_backward"))
def _relu_backward_fake(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(result)  # result's layout, as relu_backward_impl
