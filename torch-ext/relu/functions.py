"""The public function and its autograd.

The ops are built on the torch stable ABI (torch-ext/torch_binding.cpp), which has no C++
autograd API, so the gradient is wired here. A call that records no gradient goes straight to
the op, as one C++ dispatch: at small sizes the call path, not the kernel, decides the latency,
so no-grad calls never enter Python autograd."""

from typing import Optional

import torch
from torch.autograd import forward_ad

from . import _dtypes, _ops
from ._allocation import raise_torch_allocation_error
from ._checks import check_arguments, check_gradient_dtype
from ._ops import add_op_namespace_prefix, ops

# Bound once: an OpOverload call skips the overload resolution of `ops.relu(...)`.
_relu = ops.relu.default
_relu_out = ops.relu_out.default
_relu_backward = ops.relu_backward.default
# What eager calls run. A compiled variant: what an OpOverload call runs, minus its Python
# __call__ frame (`return self._op(*args)` on torch 2.11 to 2.15): 0.3 us of a 2.5 us relu(x)
# of 1024 floats on the dev CPU (Zen 3). A noarch variant (_noarch.py): the ops' Python
# kernels called directly, without the torch.library round trip (a dispatch into Python and
# back); they hand what they cannot serve (another device, a tensor subclass, an active
# mode or transform) to the op. Eager calls only: Dynamo traces OpOverloads, not these.
_relu_eager, _relu_out_eager, _relu_backward_eager = getattr(
    _ops, "eager_kernels", (_relu._op, _relu_out._op, _relu_backward._op))
_is_grad_enabled = torch.is_grad_enabled
# What torch.autograd.graph.increment_version calls, without its Python wrapper (a tuple of
# tensors: the form torch 2.11 to 2.15 take).
_increment_version = torch._C._increment_version
_functorch_transforms_active = torch._C._are_functorch_transforms_active
_unwrap_if_dead = torch._C._functorch.unwrap_if_dead


def _records_gradient(x: torch.Tensor, other: Optional[torch.Tensor] = None) -> bool:
    # Inside a forward-AD dual level a tangent may ride on any tensor: take the autograd path,
    # which raises (no jvp: Dynamo cannot trace an autograd.Function that has one) rather
    # than dropping the tangent silently. Cheapest test first: this runs on every call.
    requires_grad = x.requires_grad or (other is not None and other.requires_grad)
    return (requires_grad and _is_grad_enabled()) or forward_ad._current_level >= 0


class _ReluFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = _relu(x) if _is_dynamo_compiling() else _relu_eager(x)
        # The output alone decides the gradient: result > 0 exactly where x > 0.
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        # A plain backward (no create_graph) runs with grad mode off: straight to the kernel.
        if _is_grad_enabled() or forward_ad._current_level >= 0 or _is_dynamo_compiling():
            return _relu_backward_differentiable(grad, result)
        try:
            return _relu_backward_eager(grad, result)
        except RuntimeError as error:
            raise_torch_allocation_error(error, result)  # an out-of-memory as torch words it
            raise


class _ReluBackwardFunction(torch.autograd.Function):
    """relu_backward is differentiable too, so double backward (gradient penalties,
    Hessian-vector products) works as with torch.relu: grad_out * mask is linear in grad_out
    with the same mask, and the mask is flat in result."""

    @staticmethod
    def forward(ctx, grad_out, result):
        ctx.save_for_backward(result)
        return _relu_backward(grad_out, result) if _is_dynamo_compiling() else _relu_backward_eager(grad_out, result)

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return _relu_backward_differentiable(grad, result), None


def _relu_backward_differentiable(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    try:
        if _records_gradient(grad_out, result):
            return _ReluBackwardFunction.apply(grad_out, result)
        return _relu_backward(grad_out, result)
    except RuntimeError as error:
        raise_torch_allocation_error(error, result)  # an out-of-memory as torch words it
        raise


# autograd.Function.apply's C part, bound to _ReluFunction: what its Python classmethod runs
# (torch 2.9 to 2.15) when no functorch transform is active, after unwrapping dead functorch
# wrappers. Eager calls only, the same condition checked: the Python frame and its checks
# were 7-12 us of a relu(x) forward on the dev CPU (Zen 3).
_relu_function_apply = torch._C._FunctionBase.__dict__["apply"].__get__(None, _ReluFunction)


# ---- Under torch.compile: relu's definition in aten ops instead of the op. The op is opaque
# to Inductor, which then cannot fuse relu with x's producer or the result's consumers:
# compiled, relu(x).square() took twice torch.relu's time on the H200. where(x > 0, x, 0) is
# the definition itself: x's dtype, NaN and -0.0 to +0 (x > 0 is false there). Which dtypes
# take which form: _dtypes.py.

# Bound once, like the ops above; Dynamo folds it to True while it traces relu. It adds
# 10-50 ns to an eager relu(x) of 1024 floats (2.7 us on the 2-core dev VM), where
# torch.compiler.is_compiling() adds 170-210 ns (two Python calls). The price: non-strict
# torch.export, which does not run Dynamo, records the op as before.
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling


class _ReluDecomposedFunction(torch.autograd.Function):
    """The compiled gradient, from the result as relu_backward and torch.relu's backward take
    it: where(result > 0, grad, 0). Autograd of where(x > 0, x, 0) gives the same bits but
    keeps the mask x > 0 for the backward: in a Linear-relu-Linear block, one byte per
    element written, held and read besides the result, which the next Linear keeps anyway."""

    @staticmethod
    def forward(ctx, x):
        result = torch.where(x > 0, x, 0)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return torch.where(result > 0, grad, 0)


def _relu_decomposed(x: torch.Tensor, out: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
    """relu() while Dynamo traces it. Rejects what the binding rejects, in its words, at trace
    time and so before anything is written (check_arguments). None: relu() takes the op path
    (float8; out= while recording a gradient, which that path rejects)."""
    if out is not None and _records_gradient(x, out):
        check_arguments(x, None)
        return None
    check_arguments(x, out)
    if x.dtype in _dtypes.UNSIGNED:
        return x.clone() if out is None else out.copy_(x)
    if x.dtype in _dtypes.WHERE:
        if out is None:
            return _ReluDecomposedFunction.apply(x) if _records_gradient(x) else torch.where(x > 0, x, 0)
        return out.copy_(torch.where(x > 0, x, 0))
    return None


def _relu_differentiable(x: torch.Tensor) -> torch.Tensor:
    if x.requires_grad:
        check_gradient_dtype(x)
    return _ReluFunction.apply(x)


def _relu_differentiable_eager(x: torch.Tensor) -> torch.Tensor:
    if x.dtype not in _dtypes.GRADIENT and x.requires_grad:
        check_gradient_dtype(x)
    if _functorch_transforms_active():
        return _ReluFunction.apply(x)
    return _relu_function_apply(_unwrap_if_dead(x))


def _raise_out_requires_grad():
    # torch's own wording for out= ops, so users see one message whichever relu they call.
    raise RuntimeError(
        "relu(): functions with out=... arguments don't support automatic "
        "differentiation, but one of the arguments requires grad."
    )


def _relu_traced(x: torch.Tensor, out: Optional[torch.Tensor]) -> torch.Tensor:
    """relu() while Dynamo traces it: the decomposition, else the op through its OpOverload
    (what Dynamo can put in a graph)."""
    decomposed = _relu_decomposed(x, out)
    if decomposed is not None:
        return decomposed
    if out is None:
        return _relu_differentiable(x) if _records_gradient(x) else _relu(x)
    if _records_gradient(x, out):
        _raise_out_requires_grad()
    _relu_out(out, x)
    _increment_version((out,))
    return out


def relu(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """ReLU: ``out = x > 0 ? x : 0`` elementwise (NaN -> 0, -0.0 -> +0.0).

    Args:
        x: any shape and layout; float32, float16, bfloat16, float64, float8_e4m3fn,
            float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, int8, int16, int32, int64,
            uint8, uint16, uint32 or uint64, on the CPU or a device this build supports.
            Gradients for float32, float16, bfloat16 and float64 only; unsigned dtypes
            come back unchanged (relu is the identity there).
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
    try:
        if _is_dynamo_compiling():
            return _relu_traced(x, out)
        # The gradient tests below are _records_gradient() written out: this is the path of
        # every eager call, and at small sizes a Python call is a measurable part of it.
        if out is None:
            if (x.requires_grad and _is_grad_enabled()) or forward_ad._current_level >= 0:
                return _relu_differentiable_eager(x)
            return _relu_eager(x)
        if ((x.requires_grad or out.requires_grad) and _is_grad_enabled()) or forward_ad._current_level >= 0:
            _raise_out_requires_grad()
        _relu_out_eager(out, x)
        # Writing into out bumps its version counter, as torch's out= ops do: a tensor
        # autograd saved and then overwritten must make backward raise, not use new values.
        _increment_version((out,))
        return out
    except AttributeError:
        if not isinstance(x, torch.Tensor) or not isinstance(out, (torch.Tensor, type(None))):
            raise TypeError(
                f"relu: x and out must be torch.Tensor (out may be None); got "
                f"{type(x).__name__} and {type(out).__name__}"
            ) from None
        raise
    except ValueError:
        # The binding rejects bad arguments with std::invalid_argument, which reaches Python
        # as ValueError whatever the mistake; the Python checker raises the same mistake in
        # the same words with its type (a dtype mistake is a TypeError, as in torch). What it
        # does not check (out partially overlapping x) stays the binding's ValueError.
        try:
            check_arguments(x, out)
        except (TypeError, ValueError) as typed:
            raise typed from None
        raise
    except RuntimeError as error:
        raise_torch_allocation_error(error, x)  # an out-of-memory as torch words it
        raise


# The ops themselves are not differentiable (the stable ABI cannot build a graph node; relu()
# above carries the gradient). A fallthrough at the Autograd key says so to the dispatcher:
# a direct op call then costs no autograd fallback, and its output simply does not require
# grad, instead of the default fallback's warning at backward time.
_fallthrough = torch.library.Library(ops.name, "IMPL")
for _op in ("relu", "relu_out", "relu_backward", "relu_squared", "relu_squared_out", "relu_squared_backward",
            "relu_and_mul", "relu_and_mul_out", "relu_and_mul_backward", "relu_squared_and_mul",
            "relu_squared_and_mul_out", "relu_squared_and_mul_backward"):
    _fallthrough.impl(_op, torch.library.fallthrough_kernel, "Autograd")

# What kernels' function mapping (kernelize with a function) reads to allow training and
# torch.compile modes, as layers.ReLU declares for the layer route.
relu.has_backward = True
relu.can_torch_compile = True


@torch.library.register_fake(add_op_namespace_prefix("relu"))
def _relu_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.register_fake(add_op_namespace_prefix("relu_out"))
def _relu_out_fake(out: torch.Tensor, x: torch.Tensor) -> None:
    return None


@torch.library.register_fake(add_op_namespace_prefix("relu_backward"))
def _relu_backward_fake(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    # Mirrors relu_backward_impl: the gradient takes result's layout, as relu's result takes
    # x's (empty_like keeps the strides of a dense tensor and orders a strided one's).
    return torch.empty_like(result)
