"""The ops of the noarch variants (torch-cpu, torch-cuda, torch-xpu): a thin shim over torch.

register_ops defines torch_binding.cpp's ops, schemas and all, under the variant's namespace,
so functions.py and layers.py run on a variant without a binary unchanged. The checks are
_checks.py's, raised as the binding raises them (ValueError) before any write; the overlap rule
is the binding's (tensor_geometry.h). relu is one torch op per dtype, exact by its definition
on its device; torch walks every layout at its own speed and lays results out as torch.relu:
                CPU                                CUDA         XPU, any other device
  floats        threshold(x, 0, 0), NaN to +0      fmax(x, 0)   where(x > 0, x, 0)
  signed ints   clamp_min(x, 0); unsigned: a copy (relu is the identity)
  float8        on int8 bit patterns, keep b where 0 < b <= the largest positive non-NaN
                pattern; on CUDA from TRITON_MIN_BYTES one Triton pass over dense data
                (_triton.py), other layouts through a dense copy
Measured: on the CPU fmax runs unvectorized and keeps -0.0 on some vector paths; where took
1.9-19x threshold's two passes at 4 KiB-4 MiB, clamp_min + nan_to_num + 0.0 1.2-1.4x (Zen 4,
AVX-512, torch 2.13). On CUDA fmax is one TensorIterator kernel (NaN to the other operand, -0
below +0). The backward op is where(result > 0, grad_out, 0); autograd's eager calls take
threshold_backward, torch.relu's own backward, equal to it on relu's outputs (never NaN).
torch.library.Library, not triton_op, which traces the body with fake tensors: they lack the
addresses the overlap rule reads. Compiled, relu() hands Inductor where(x > 0, x, 0) itself."""

import math

import torch

from . import _definitions

# CUDA float8 calls below this run on torch ops: Triton's launch is Python (about 23 us of host
# time on the H200, Triton 3.6), and a first call under graph capture would compile there.
TRITON_MIN_BYTES = 64 * 1024
_INF = float("inf")
_CPU_ZEROS: dict = {}


def _check(name: str, *args) -> None:
    """_checks.<name>(*args), raising as the binding does: ValueError, whatever the mistake."""
    from . import _checks  # at the first call: _checks reads the ops defined here

    try:
        getattr(_checks, name)(*args)
    except TypeError as error:
        raise ValueError(str(error)) from None


def _cpu_zero(dtype: torch.dtype) -> torch.Tensor:
    # 0-dim on the CPU: a CUDA kernel takes it as a scalar argument (nothing on the device).
    if dtype not in _CPU_ZEROS:
        _CPU_ZEROS[dtype] = torch.zeros((), dtype=dtype)
    return _CPU_ZEROS[dtype]


def _zero_like(t: torch.Tensor) -> torch.Tensor:
    # where(out=) takes no scalar and copies a CPU zero to the device at every call, which a
    # CUDA graph cannot capture: a device tensor gets its own, filled on its stream.
    return _cpu_zero(t.dtype) if t.is_cpu else t.new_zeros(())


def _same_strides(a: torch.Tensor, b: torch.Tensor) -> bool:
    return all(size == 1 or sa == sb for size, sa, sb in zip(a.shape, a.stride(), b.stride()))


def _is_dense(t: torch.Tensor) -> bool:
    """torch's is_non_overlapping_and_dense: some order of the dimensions is contiguous."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _may_share_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """tensor_geometry.h's may_share_memory: the byte spans; then, when neither is dense, the
    gcd g of both tensors' byte strides: every element of a starts a multiple of g from a's
    start, every one of b from b's, so none meet when b's offset from a modulo g leaves an
    element's width to either side."""
    if a.numel() == 0 or b.numel() == 0:
        return False
    width, spans, g = a.element_size(), [], 0
    for t in (a, b):
        low = high = 0
        for size, stride in zip(t.shape, t.stride()):
            low, high = (low + (size - 1) * stride, high) if stride < 0 else (low, high + (size - 1) * stride)
            g = math.gcd(g, abs(stride) * width) if size > 1 else g
        spans.append((t.data_ptr() + low * width, t.data_ptr() + (high + 1) * width))
    meet = spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]
    if not meet or _is_dense(a) or _is_dense(b) or g == 0:  # g 0: single elements
        return meet
    phase = (b.data_ptr() - a.data_ptr()) % g
    return phase < width or phase > g - width


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
    if (out.data_ptr() == x.data_ptr() and _same_strides(out, x)) or not _may_share_memory(out, x):
        return x
    if _is_dense(out) and _is_dense(x):
        _check("raise_partial_overlap", op)
    return x.clone()  # interleaved views of one buffer: all of x is read before out is written


def _float8_rule(dtype: torch.dtype, on_cuda: bool):
    # The largest positive non-NaN pattern: +inf's, or the largest finite value's where the
    # format has no inf (e4m3fn; the fnuz formats' one NaN, 0x80, is negative as an int8).
    largest = torch.tensor(_INF).to(dtype)
    if not largest.float().isinf():
        largest = torch.tensor(torch.finfo(dtype).max).to(dtype)
    limit, triton = int(largest.view(torch.int8).item()), None
    if on_cuda:
        try:
            from . import _triton as triton
        except ImportError:  # no Triton: torch ops serve float8 too
            pass

    def relu(x, out):
        if triton is not None and x.nbytes >= TRITON_MIN_BYTES:
            result = torch.empty_like(x) if out is None else out
            if _same_strides(x, result) and _is_dense(result):
                triton.relu_float8(x.view(torch.int8), result.view(torch.int8), limit)
            else:  # rare: a pass over a dense copy, read in full before result is written
                dense = x.view(torch.int8).clone(memory_format=torch.contiguous_format)
                triton.relu_float8(dense, dense, limit)
                result.view(torch.int8).copy_(dense)
            return result
        bits = x.view(torch.int8)
        keep = (bits > 0) & (bits <= limit)
        if out is None:
            return torch.where(keep, bits, 0).view(x.dtype)
        torch.where(keep, bits, _zero_like(bits), out=out.view(torch.int8))
        return out

    return relu


def _rule(device_type: str, dtype: torch.dtype):
    """relu in `dtype` on `device_type` ("cpu", "cuda", "xpu"): fn(x, out) -> out, or a new
    tensor when out is None."""
    if not dtype.is_floating_point:
        if not dtype.is_signed:
            return lambda x, out: x.clone() if out is None else out.copy_(x)
        return lambda x, out: torch.clamp_min(x, 0) if out is None else torch.clamp_min(x, 0, out=out)
    if dtype.itemsize == 1:
        return _float8_rule(dtype, on_cuda=device_type == "cuda")
    if device_type == "cuda":
        zero = _cpu_zero(dtype)
        return lambda x, out: torch.fmax(x, zero) if out is None else torch.fmax(x, zero, out=out)
    if device_type == "cpu":
        return lambda x, out: (torch.threshold(x, 0, 0) if out is None
                               else torch.threshold(x, 0, 0, out=out)).nan_to_num_(0.0, _INF)
    return lambda x, out: torch.where(x > 0, x, 0) if out is None else torch.where(x > 0, x, _zero_like(x), out=out)


def _relu_backward(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    _check("check_backward_arguments", grad_out, result)
    grad_in = torch.empty_like(result)  # result's layout, as the binding's
    return torch.where(result > 0, grad_out, _zero_like(result), out=grad_in)


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
        return _definitions.gated_forward(x, gate, threshold)

    def forward_out(out, x, threshold=0.0):
        _check("check_gated_arguments", x, out, gate)
        if _may_share_memory(out, x):
            _check("raise_gated_overlap", gate)
        out.copy_(_definitions.gated_forward(x, gate, threshold))

    def backward(grad_out, x, threshold=0.0):
        _check("check_gated_backward_arguments", grad_out, x, gate)
        return torch.empty_like(x).copy_(_definitions.gated_backward(grad_out, x, gate, threshold))  # x's layout

    return forward, forward_out, backward


def device_kernels(device_type: str) -> tuple:
    """(relu, relu_out, relu_backward) by `device_type`'s rules, checked as the binding checks.
    They take tensors of any device: the tests run the XPU rules on CPU and CUDA tensors."""
    rules: dict = {}

    def rule_of(x):
        if x.dtype not in rules:
            _check("check_arguments", x, None)  # an unsupported dtype
            rules[x.dtype] = _rule(device_type, x.dtype)
        return rules[x.dtype]

    def relu(x):
        return rule_of(x)(x, None)

    def relu_out(out, x):
        rule = rule_of(x)  # x's dtype first, as the binding checks
        rule(_input_to_read(out, x), out)

    return relu, relu_out, _relu_backward


_KERNELS = {device_type: device_kernels(device_type) for device_type in ("cpu", "cuda", "xpu")}
_PLAIN = frozenset((torch.Tensor, torch.nn.Parameter))
_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_transforms = torch._C._are_functorch_transforms_active
_threshold_backward = torch.ops.aten.threshold_backward.default._op


def eager_kernels_of(ops, backend: str) -> tuple:
    """(relu, relu_out, relu_backward) for functions.py's eager calls: the kernels without the
    torch.library round trip (a dispatch into Python and back), for plain tensors (a subclass
    may handle the op itself) on this variant's devices, no torch function or dispatch mode
    and no functorch transform active (each would see or wrap the op); else the op."""
    relu_op, relu_out_op, backward_op = ops.relu.default._op, ops.relu_out.default._op, ops.relu_backward.default._op
    on_device = f"is_{backend}"  # is_cpu, is_cuda, is_xpu
    (device_relu, device_relu_out, _), (cpu_relu, cpu_relu_out, _) = _KERNELS[backend], _KERNELS["cpu"]

    def direct(t):
        return type(t) in _PLAIN and not (_dispatch_modes() or _function_modes() or _transforms())

    def relu(x):
        if direct(x):
            if getattr(x, on_device):
                return device_relu(x)
            if x.is_cpu:
                return cpu_relu(x)
        return relu_op(x)

    def relu_out(out, x):
        if direct(x) and type(out) in _PLAIN:
            if getattr(x, on_device):
                return device_relu_out(out, x)
            if x.is_cpu:
                return cpu_relu_out(out, x)
        relu_out_op(out, x)

    def relu_backward(grad_out, result):
        # Autograd's call: relu's result (a gradient dtype, checked at the call), a gradient
        # of its dtype and device; threshold_backward lays grad_in out as result when both agree.
        if (direct(result) and type(grad_out) in _PLAIN and grad_out.dtype == result.dtype
                and grad_out.shape == result.shape and grad_out.stride() == result.stride()):
            return _threshold_backward(grad_out, result, 0)
        return backward_op(grad_out, result)

    return relu, relu_out, relu_backward


_LIBRARIES: list = []


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
        for op, kernel in zip(("relu", "relu_out", "relu_backward"), _KERNELS[device_type]):
            # Below autograd, as a C++ kernel: the Autograd key falls through to it (functions.py),
            # so it may get tensors that require grad, and its torch ops must record nothing.
            library.impl(op, torch.no_grad()(kernel), device_type.upper())
        # relu_squared and the gated ops: their definitions in torch ops, the same on every device.
        for op, kernel in zip(("relu_squared", "relu_squared_out", "relu_squared_backward"),
                              (_relu_squared, _relu_squared_out, _relu_squared_backward)):
            library.impl(op, torch.no_grad()(kernel), device_type.upper())
        for gate in ("relu_and_mul", "relu_squared_and_mul"):
            for suffix, kernel in zip(("", "_out", "_backward"), _gated_kernels(gate)):
                library.impl(gate + suffix, torch.no_grad()(kernel), device_type.upper())
    _LIBRARIES.append(library)  # a Library unregisters its ops when collected
    return ops
