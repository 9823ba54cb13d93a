"""The ops of the noarch variants (torch-cpu, torch-cuda, torch-xpu): a thin shim over torch.

register_ops defines torch_binding.cpp's ops, schemas and all, under the variant's namespace,
so the package runs on a variant without a binary unchanged. The checks are _checks.py's,
raised as the binding raises them (ValueError) before any write; relu runs _noarch_rules.py's
op per device and dtype, relu_squared and the gated ops their definitions (_definitions.py).
torch.library.Library, not triton_op, which traces the body with fake tensors: they lack the
addresses the overlap rule reads."""

import torch

from . import _definitions
from ._noarch_layout import is_dense, may_share_memory, same_strides
from ._noarch_rules import rule, zero_like

_threshold_backward = torch.ops.aten.threshold_backward.default


def _check(name: str, *args) -> None:
    """_checks.<name>(*args), raising as the binding does: ValueError, whatever the mistake."""
    from . import _checks  # at the first call: _checks reads the ops defined here

    try:
        getattr(_checks, name)(*args)
    except TypeError as error:
        raise ValueError(str(error)) from None


def _input_to_read(out: torch.Tensor, x: torch.Tensor, op: str = "relu") -> torch.Tensor:
    """check_relu_args (argument_checks.h) past x's dtype, then what relu_out reads: x, or a
    copy where out may share x's memory without being x in place (relu_out_checked)."""
    if (out.dtype == x.dtype and out.shape == x.shape and out.device == x.device and x.is_contiguous()
            and out.is_contiguous()):
        # All checked: a contiguous out repeats no element, and two contiguous tensors of one
        # shape share memory only as the very same elements (in place) or partly.
        start, out_start, nbytes = x.data_ptr(), out.data_ptr(), x.nbytes
        if start != out_start and start < out_start + nbytes and out_start < start + nbytes:
            _check("raise_partial_overlap", op)
        return x
    _check("check_arguments", x, out, op)
    if (out.data_ptr() == x.data_ptr() and same_strides(out, x)) or not may_share_memory(out, x):
        return x
    if is_dense(out) and is_dense(x):
        _check("raise_partial_overlap", op)
    return x.clone()  # interleaved views of one buffer: all of x is read before out is written


def _relu_backward(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    _check("check_backward_arguments", grad_out, result)
    if result.is_cpu and result.dtype != torch.bfloat16 and grad_out.stride() == result.stride():
        # torch.relu's own backward, a fraction of where's time on the CPU, bit for bit but where
        # result is NaN (it passes grad_out) and bfloat16's NaN payloads. Result's layout.
        return _threshold_backward(grad_out, result.nan_to_num(0.0), 0)
    grad_in = torch.empty_like(result)  # result's layout, as the binding's
    return torch.where(result > 0, grad_out, zero_like(result), out=grad_in)


def _relu_squared(x: torch.Tensor) -> torch.Tensor:
    _check("check_arguments", x, None, "relu_squared")
    return _definitions.relu_squared_forward(x)


def _relu_squared_out(out: torch.Tensor, x: torch.Tensor) -> None:
    _check("check_arguments", x, out, "relu_squared")
    out.copy_(_definitions.relu_squared_forward(_input_to_read(out, x, "relu_squared")))


def _relu_squared_backward(grad_out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    _check("check_backward_arguments", grad_out, x, "relu_squared")
    return torch.empty_like(x).copy_(_definitions.relu_squared_backward(grad_out, x))  # x's layout


def _gated_kernels(gate: str) -> tuple:
    """(forward, forward into out, backward) of a gated op, its definition in torch ops."""

    def forward(x, threshold=0.0):
        _check("check_gated_arguments", x, None, gate)
        return _definitions.gated_forward(gate, x, threshold)

    def forward_out(out, x, threshold=0.0):
        _check("check_gated_arguments", x, out, gate)
        if may_share_memory(out, x):
            _check("raise_gated_overlap", gate)
        out.copy_(_definitions.gated_forward(gate, x, threshold))

    def backward(grad_out, x, threshold=0.0):
        _check("check_gated_backward_arguments", grad_out, x, gate)
        return torch.empty_like(x).copy_(_definitions.gated_backward(gate, grad_out, x, threshold))  # x's layout

    return forward, forward_out, backward


def device_kernels(device_type: str) -> dict:
    """{op: (forward, forward into out, backward)} on `device_type`, checked as the binding checks;
    relu by the device's rules, the others by their definitions. They take tensors of any
    device: the tests run the XPU rules on CPU and CUDA tensors."""
    rules: dict = {}

    def rule_of(x):
        if x.dtype not in rules:
            _check("check_arguments", x, None)  # an unsupported dtype
            rules[x.dtype] = rule(device_type, x.dtype)
        return rules[x.dtype]

    def relu(x):
        return rule_of(x)(x, None)

    def relu_out(out, x):
        relu_rule = rule_of(x)  # x's dtype first, as the binding checks
        relu_rule(_input_to_read(out, x), out)

    return {"relu": (relu, relu_out, _relu_backward),
            "relu_squared": (_relu_squared, _relu_squared_out, _relu_squared_backward),
            "relu_and_mul": _gated_kernels("relu_and_mul"),
            "relu_squared_and_mul": _gated_kernels("relu_squared_and_mul")}


_KERNELS = {device_type: device_kernels(device_type) for device_type in ("cpu", "cuda", "xpu")}
_SUFFIXES = ("", "_out", "_backward")
_LIBRARIES: list = []


def eager_kernels(ops, backend: str) -> dict:
    """{op: (forward, forward into out, backward)} for the eager path: the kernels called
    directly, past the torch.library round trip (a dispatch into Python and back, dearer than
    relu), for plain tensors on one of this variant's devices; anything else (a subclass that
    may handle the op itself, mixed devices) takes the op. Public API only: under a torch
    dispatch mode or a functorch transform the kernels' torch ops are what it sees."""
    served = {device: _KERNELS[device] for device in ("cpu", backend)}
    plain = torch.Tensor

    def direct(name: str, index: int):
        overload = getattr(ops, name + _SUFFIXES[index]).default
        by_device = {device: kernels[name][index] for device, kernels in served.items()}

        def call(first, *rest):
            kernel = by_device.get(first.device.type) if type(first) is plain else None
            if kernel is None or any(type(t) is not plain or t.device != first.device
                                     for t in rest if isinstance(t, torch.Tensor)):
                return overload(first, *rest)
            return kernel(first, *rest)

        return call

    return {name: tuple(direct(name, index) for index in range(3)) for name in _KERNELS["cpu"]}


def register_ops(namespace: str, backend: str, dtype_table: str):
    """The binding's ops under `namespace` (the variant's id), with kernels for CPU tensors and
    `backend`'s ("cuda", "xpu"); returns torch.ops.<namespace>. Once per process: a variant
    loaded twice (kernels and the sys.path route) shares one registration."""
    ops = getattr(torch.ops, namespace)
    if hasattr(ops, "relu"):
        return ops
    library = torch.library.Library(namespace, "DEF")
    for schema in ("relu(Tensor x) -> Tensor", "relu_out(Tensor(a!) out, Tensor x) -> ()", "cpu_isa() -> str",
                   "relu_backward(Tensor grad_out, Tensor result) -> Tensor", "dtype_table() -> str",
                   "relu_squared(Tensor x) -> Tensor", "relu_squared_out(Tensor(a!) out, Tensor x) -> ()",
                   "relu_squared_backward(Tensor grad_out, Tensor x) -> Tensor",
                   "relu_and_mul(Tensor x, float threshold) -> Tensor",
                   "relu_and_mul_out(Tensor(a!) out, Tensor x, float threshold) -> ()",
                   "relu_and_mul_backward(Tensor grad_out, Tensor x, float threshold) -> Tensor",
                   "relu_squared_and_mul(Tensor x) -> Tensor", "relu_squared_and_mul_out(Tensor(a!) out, Tensor x) -> ()",
                   "relu_squared_and_mul_backward(Tensor grad_out, Tensor x) -> Tensor"):
        library.define(schema)
    library.impl("dtype_table", lambda: dtype_table, "CompositeExplicitAutograd")
    # The binding's answer is the SIMD variant of its CPU kernel; here torch's ops run.
    library.impl("cpu_isa", lambda: "torch (no CPU kernel of its own)", "CompositeExplicitAutograd")
    for device_type in dict.fromkeys(("cpu", backend)):
        for name, kernels in _KERNELS[device_type].items():
            for suffix, kernel in zip(_SUFFIXES, kernels):
                # Below autograd, as a C++ kernel: the Autograd key falls through to it
                # (functions.py), so it may get tensors that require grad: record nothing.
                library.impl(name + suffix, torch.no_grad()(kernel), device_type.upper())
    _LIBRARIES.append(library)  # a Library unregisters its ops when collected
    return ops
