"""The ops of the noarch variants (torch-cuda, torch-cpu), registered from Python.

A noarch variant carries no binary: this module defines the ops torch_binding.cpp defines,
with the same schemas, under the variant's own namespace, so functions.py and layers.py run
unchanged on top of it. Nothing here is a second copy of the binding's concerns:

  - the errors are _checks.py's, the package's one checker in the binding's words (raised as
    ValueError, as the stable ABI hands the binding's errors to Python), before any write;
  - the dtypes: dtype_table() returns the text the binding's op returns, rendered when the
    variant is staged from the binding's one table (scripts/build_variant.py reads
    relu-common/relu_dtypes.h; tests/test_package.py holds the rendering to the compiled
    op's text), and _dtypes.py reads it as from a compiled variant. This module keeps only
    how each accepted dtype is computed (_rule), from what the dtype is, not a list.

  - CPU tensors: torch's own ops with relu's exact semantics (clamp_min, then NaN and -0.0 to
    +0 for floats: torch.relu, clamp_min and threshold keep NaN on the CPU),
    float8 on its bit patterns, unsigned dtypes as copies. torch's own speed, nothing more.
  - CUDA tensors: one aten kernel where one has relu's exact semantics (fmax(x, 0) for
    floats, clamp_min(x, 0) for signed integers, a copy for unsigned ones: a C++ launch path,
    torch's own speed); the Triton kernels of _triton.py, imported at the first call that
    needs them (a CPU user needs no Triton), where aten has none (float8) or is slower
    (views with contiguous rows), from SMALL_CALL_BYTES up (Triton's launch path is Python).

Eager calls of relu() (functions.py) skip the torch.library round trip: eager_kernels_of()
gives it these kernels to call directly, for plain tensors on this variant's devices with
no mode or transform active; everything else (and every torch.ops or compiled call) takes
the ops.

Registered with torch.library.Library (define, then a Python kernel per dispatch key), not
torch.library.triton_op: triton_op has torch.compile trace the op's body with fake tensors,
and this body reads addresses (partial overlap, in place) that fake tensors do not have.
Nothing is lost under compile: there relu() hands Dynamo where(x > 0, x, 0) itself
(functions.py), which Inductor fuses, and only float8 keeps the op, opaque as the compiled
variant's is (its fake kernel is functions.py's)."""

import torch

# How each dtype's relu runs on a same-width integer view of its bits (_triton.py says why):
MODE_COPY = 0  # unsigned: never negative
MODE_SIGNED = 1  # keep b if b > 0
MODE_BOUNDED = 2  # keep b if 0 < b <= limit, the largest positive non-NaN bit pattern
_INTEGER_OF_WIDTH = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
_RULES: dict = {}


def _rule(dtype: torch.dtype) -> tuple:
    """(integer view, mode, limit) of a dtype the checks accepted, from what the dtype is
    (which dtypes are accepted is the binding's table alone, read by _dtypes.py): a float's
    limit is +inf's bits, or its largest finite value's where it has no inf (float8 fn and
    fnuz; fnuz's only NaN, 0x80, is negative as an int8)."""
    rule = _RULES.get(dtype)
    if rule is None:
        bits_dtype = _INTEGER_OF_WIDTH[dtype.itemsize]
        if not dtype.is_floating_point:
            rule = (bits_dtype, MODE_SIGNED if dtype.is_signed else MODE_COPY, 0)
        else:
            largest = torch.tensor(float("inf")).to(dtype)
            if not largest.float().isinf():
                largest = torch.tensor(torch.finfo(dtype).max).to(dtype)
            rule = (bits_dtype, MODE_BOUNDED, int(largest.view(bits_dtype).item()))
        _RULES[dtype] = rule
    return rule


def _is_float8(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point and dtype.itemsize == 1


# CUDA calls of fewer bytes never take Triton, whose Python launch costs about 23 us (H200,
# Triton 3.6) where an aten launch costs 7-11: float8 below it runs on torch ops too.
SMALL_CALL_BYTES = 64 * 1024
# Dense int8 from here on runs on Triton: aten's int8 clamp moves 4 bytes per access and took
# 1.25x Triton's GPU time at 256 MiB on the H200 (163 against 130 us, PERFORMANCE.md's host
# cost section); below it the launcher's host time (30-50 us) outweighs the GPU time saved.
INT8_TRITON_BYTES = 64 * 1024 * 1024
# Tests and studies pin one path for CUDA calls: "triton" (every call, whatever its size or
# dtype) or "torch" (aten ops only); None routes by the measurements above and below.
FORCE_PATH = None


# ---- Argument checks: the package's one checker (_checks.py, the binding's words), raised as
# the binding raises them (ValueError: functions.py gives dtype mistakes their TypeError),
# before anything is written. Imported at the first call: _checks needs _dtypes, which needs
# the ops this module registers.
_checks = None


def _checker():
    global _checks
    if _checks is None:
        from . import _checks as checks

        _checks = checks
    return _checks


def _as_binding_error(check, *args) -> None:
    try:
        check(*args)
    except TypeError as error:
        raise ValueError(str(error)) from None


# The dtypes the checker has accepted so far: after the first call in a dtype, its check is a
# set lookup (the list itself is the binding's table, read by _dtypes.py).
_ACCEPTED: set = set()


def _check_dtype(x: torch.Tensor) -> None:
    if x.dtype not in _ACCEPTED:
        _as_binding_error(_checker().check_arguments, x, None)
        _ACCEPTED.add(x.dtype)


def _is_dense(t: torch.Tensor) -> bool:
    """torch's is_non_overlapping_and_dense: some permutation of the dimensions is contiguous."""
    if t.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _same_strides(a: torch.Tensor, b: torch.Tensor) -> bool:
    return all(size == 1 or sa == sb for size, sa, sb in zip(a.shape, a.stride(), b.stride()))


def _may_share_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the bytes of two tensors' elements can overlap."""
    if a.numel() == 0 or b.numel() == 0:
        return False

    def byte_span(t):
        low = high = 0
        for size, stride in zip(t.shape, t.stride()):
            reach = (size - 1) * stride
            if reach < 0:
                low += reach
            else:
                high += reach
        return t.data_ptr() + low * t.element_size(), t.data_ptr() + (high + 1) * t.element_size()

    a_low, a_high = byte_span(a)
    b_low, b_high = byte_span(b)
    return a_low < b_high and b_low < a_high


def _is_in_place(out: torch.Tensor, x: torch.Tensor) -> bool:
    return out.data_ptr() == x.data_ptr() and _same_strides(out, x)


def _check_relu_args(out: torch.Tensor, x: torch.Tensor) -> bool:
    """The binding's checks; returns whether out and x are both dense (computed on the way)."""
    if (x.dtype in _ACCEPTED and out.dtype == x.dtype and out.is_cuda == x.is_cuda and out.is_cpu == x.is_cpu
            and out.get_device() == x.get_device() and out.shape == x.shape and x.is_contiguous()
            and out.is_contiguous()):
        # The common case, all of it checked: contiguous out repeats no element, and two
        # contiguous tensors of one shape share memory only as the same elements or partly.
        x_start, out_start, nbytes = x.data_ptr(), out.data_ptr(), x.nbytes
        if x_start != out_start and x_start < out_start + nbytes and out_start < x_start + nbytes:
            _checker().raise_partial_overlap()
        return True
    checks = _checker()
    _as_binding_error(checks.check_arguments, x, out)
    _ACCEPTED.add(x.dtype)
    dense = _is_dense(out) and _is_dense(x)
    # Two dense tensors that share memory must be the very same elements (in place); other
    # sharing is made safe by reading x into a temporary first (_triton_relu_into).
    if dense and _may_share_memory(out, x) and not _is_in_place(out, x):
        checks.raise_partial_overlap()
    return dense


def _check_backward_args(grad_out: torch.Tensor, result: torch.Tensor) -> None:
    _checker().check_backward_arguments(grad_out, result)


# ---- The torch path: CPU tensors, and small CUDA calls.

def _bits(t: torch.Tensor, bits_dtype: torch.dtype) -> torch.Tensor:
    # A view op costs a dispatch: integer tensors are their own bits.
    return t if t.dtype == bits_dtype else t.view(bits_dtype)


_ZEROS: dict = {}


def _zero(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A 0-dim zero for where(out=), which has no scalar form; one per dtype and device,
    cached from an eager call. Under CUDA-graph capture its fill would be recorded, not run:
    a zero made there serves that call alone (the graph replays its fill) and is not cached,
    or eager calls before the first replay would read memory never written."""
    zero = _ZEROS.get((dtype, device))
    if zero is None:
        zero = torch.zeros((), dtype=dtype, device=device)
        if device.type != "cuda" or not torch.cuda.is_current_stream_capturing():
            _ZEROS[(dtype, device)] = zero
    return zero


_CPU_ZEROS: dict = {}


def _cpu_zero(dtype: torch.dtype) -> torch.Tensor:
    """The zero operand of fmax and add_: a 0-dim CPU tensor, which a CUDA kernel takes as a
    scalar argument (TensorIterator's CPU scalar): nothing allocated on the device, nothing
    for a CUDA graph to capture but the constant."""
    zero = _CPU_ZEROS.get(dtype)
    if zero is None:
        zero = _CPU_ZEROS[dtype] = torch.zeros((), dtype=dtype)
    return zero


# Floats on CUDA: fmax(x, 0), relu in one aten kernel: maxNum, NaN to the other operand, and
# +0 for -0.0 (CUDA's fmax orders -0 below +0). Not on the CPU: there which zero fmax returns
# for -0.0 depends on the operand order, the dtype and the vector path (torch 2.13, AVX2:
# fmax(x, 0) kept -0.0 for float32, fmax(0, x) for bfloat16), and fmax ran unvectorized,
# 15-70x clamp_min's time from 16 KiB (dev VM, AMD EPYC, AVX2). The CPU takes clamp_min,
# then NaN to +0 (infinities kept) and + 0 (a 0-dim zero: -0.0 + 0.0 is +0.0, every other
# value, denormals included, unchanged). where(x > 0, x, 0) is two kernels and a mask; on the
# dev VM x > 0 and where each took 25-600x clamp_min(out=)'s time on 1 MiB of float32.
# Signed integers: clamp_min.
_INF = float("inf")


def _float_relu(x: torch.Tensor, out=None) -> torch.Tensor:
    zero = _cpu_zero(x.dtype)
    if x.is_cuda:
        return torch.fmax(x, zero) if out is None else torch.fmax(x, zero, out=out)
    result = torch.clamp_min(x, 0) if out is None else torch.clamp_min(x, 0, out=out)
    return result.nan_to_num_(0.0, _INF).add_(zero)


def _float8_keep(bits: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x > 0 for float8 bit patterns (an int8 view): aten has no float8 comparison or clamp."""
    _, _, limit = _rule(dtype)
    return (bits > 0) & (bits <= limit)


def _torch_relu(x: torch.Tensor) -> torch.Tensor:
    # Results keep TensorIterator's layout: x's when dense, else dense in x's stride order.
    bits_dtype, mode, _ = _rule(x.dtype)
    if mode == MODE_COPY:
        return x.clone()
    if _is_float8(x.dtype):
        bits = x.view(bits_dtype)
        return torch.where(_float8_keep(bits, x.dtype), bits, 0).view(x.dtype)
    if x.dtype.is_floating_point:
        return _float_relu(x)
    return torch.clamp_min(x, 0)


def _torch_relu_into(out: torch.Tensor, x: torch.Tensor, dense: bool) -> None:
    """dense: both are (the checks then ruled out any sharing but in place)."""
    if x.numel() == 0:
        return
    if not dense and not _is_in_place(out, x) and _may_share_memory(out, x):
        x = x.clone()  # interleaved views of one buffer: read all of x before writing
    bits_dtype, mode, _ = _rule(x.dtype)
    if mode == MODE_COPY:
        _bits(out, bits_dtype).copy_(_bits(x, bits_dtype))
    elif _is_float8(x.dtype):
        bits = x.view(bits_dtype)
        torch.where(_float8_keep(bits, x.dtype), bits, _zero(bits_dtype, x.device), out=out.view(bits_dtype))
    elif x.dtype.is_floating_point:
        _float_relu(x, out)
    else:
        torch.clamp_min(x, 0, out=out)


def _torch_relu_backward(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    grad_in = torch.empty_like(result)  # result's layout, as the binding's
    if result.numel():
        torch.where(result > 0, grad_out, _zero(result.dtype, result.device), out=grad_in)
    return grad_in


# ---- The Triton path: CUDA tensors (and, in the tests, CPU tensors under TRITON_INTERPRET=1).

_kernels = None


def _triton_kernels():
    """_triton.py, imported once; a missing Triton is named at the first CUDA call."""
    global _kernels
    if _kernels is None:
        try:
            from . import _triton
        except ImportError as error:
            raise ImportError(
                "relu: this variant (torch-cuda) runs its CUDA kernels with Triton, which could not "
                f"be imported ({error}); install the triton that your torch pins (Linux CUDA torch "
                "wheels depend on it), or load a compiled variant"
            ) from error
        _kernels = _triton
    return _kernels


def _stride_order(operands: list[torch.Tensor]) -> list[int]:
    """Dimensions innermost first, ordered by the operands' strides (the first one decides
    unless it is ambiguous): TensorIterator's reorder_dimensions, as torch_binding.cpp's
    stride_order. A stride of 0 decides nothing; between equal strides the smaller size goes
    inside."""
    sizes = operands[0].shape
    strides = [t.stride() for t in operands]
    dim = len(sizes)
    order = list(range(dim - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        for s in strides:
            s0, s1 = s[d0], s[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if sizes[d0] > sizes[d1]:
                return 1
        return 0

    # Insertion sort that stops at the first "keep": the comparison is not a total order.
    for i in range(1, dim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(order[d0], order[d1])
            if comparison < 0:
                break
            if comparison > 0:
                order[d0], order[d1] = order[d1], order[d0]
                d1 = d0
    return order


def _strided_layout(operands: list[torch.Tensor], max_dims: int):
    """(sizes, strides per operand), innermost first, size-1 dimensions dropped and
    contiguous neighbours merged, as the binding's StridedLayout; None beyond max_dims."""
    shape = operands[0].shape
    all_strides = [t.stride() for t in operands]
    sizes: list[int] = []
    strides: list[list[int]] = [[] for _ in operands]
    for d in _stride_order(operands):
        if shape[d] == 1:
            continue
        if sizes and all(sizes[-1] * s[-1] == full[d] for s, full in zip(strides, all_strides)):
            sizes[-1] *= shape[d]
            continue
        if len(sizes) == max_dims:
            return None
        sizes.append(shape[d])
        for s, full in zip(strides, all_strides):
            s.append(full[d])
    if not sizes:  # one element
        return [1], [[0] for _ in operands]
    return sizes, strides


def _triton_relu_into(out: torch.Tensor, x: torch.Tensor, dense: bool) -> None:
    """out = relu(x), both checked; `dense`: both are dense. Walks any layout in out's
    stride order, then x's, without a copy, as the compiled binding does."""
    n = x.numel()
    if n == 0:
        return
    kernels = _triton_kernels()
    bits_dtype, mode, limit = _rule(x.dtype)
    if dense and _same_strides(x, out):
        # Contiguous, channels-last, permuted-dense, and in place: one flat pass.
        kernels.relu_flat(_bits(x, bits_dtype), _bits(out, bits_dtype), n, mode, limit)
        return
    if not _is_in_place(out, x) and _may_share_memory(out, x):
        x = x.clone()  # interleaved views of one buffer: read all of x before writing
    layout = _strided_layout([out, x], kernels.MAX_DIMS)
    if layout is not None:
        sizes, (out_strides, x_strides) = layout
        kernels.relu_strided(_bits(x, bits_dtype), _bits(out, bits_dtype), sizes, out_strides, x_strides,
                             mode, limit)
        return
    # More dimensions than the walk takes: through a dense copy.
    dense_x = _bits(x, bits_dtype).clone(memory_format=torch.contiguous_format)
    kernels.relu_flat(dense_x, dense_x, n, mode, limit)
    _bits(out, bits_dtype).copy_(dense_x)


def _triton_relu_backward(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    grad_in = torch.empty_like(result)  # result's layout, as the binding's
    n = result.numel()
    if n == 0:
        return grad_in
    kernels = _triton_kernels()
    bits_dtype, _, limit = _rule(result.dtype)
    views = [_bits(t, bits_dtype) for t in (grad_out, result, grad_in)]
    if _is_dense(result) and _same_strides(result, grad_out):
        kernels.relu_backward_flat(*views, n, limit)
        return grad_in
    layout = _strided_layout([grad_in, grad_out, result], kernels.MAX_DIMS)
    if layout is not None:
        sizes, strides = layout
        kernels.relu_backward_strided(*views, sizes, *strides, limit)
        return grad_in
    # Beyond the walk: both inputs in grad_in's layout first.
    grad, res = torch.empty_like(views[2]).copy_(views[0]), torch.empty_like(views[2]).copy_(views[1])
    kernels.relu_backward_flat(grad, res, views[2], n, limit)
    return grad_in


# ---- The ops' kernels, per dispatch key.

def _relu_cpu(x: torch.Tensor) -> torch.Tensor:
    _check_dtype(x)
    return _torch_relu(x)


def _relu_out_cpu(out: torch.Tensor, x: torch.Tensor) -> None:
    _torch_relu_into(out, x, _check_relu_args(out, x))


def _relu_backward_cpu(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    _check_backward_args(grad_out, result)
    return _torch_relu_backward(grad_out, result)


class _OnDeviceOf:
    """Makes x's GPU current for Triton's launch (which uses the current device), only when it
    is not already."""

    def __init__(self, x: torch.Tensor):
        index = x.device.index
        self._guard = torch.cuda.device(index) if index != torch.cuda.current_device() else None

    def __enter__(self):
        if self._guard is not None:
            self._guard.__enter__()

    def __exit__(self, *exc):
        if self._guard is not None:
            self._guard.__exit__(*exc)


def _takes_triton(x: torch.Tensor, dense=None, other=None) -> bool:
    """Whether a CUDA call of x runs on Triton (dense: whether x and `other`, the call's other
    tensor if any, are dense, checked here to have the same strides; None: x's own layout
    decides). Measured on the H200 (torch 2.11, Triton 3.6;
    benchmarks/studies/triton_compare.py): dense tensors run on aten at torch's own speed
    (int8 from INT8_TRITON_BYTES excepted), where Triton's flat pass ran at 0.96-0.97x from
    64 MiB; views with contiguous rows (a chunk x[:, :k], its transpose) ran 1.55x faster on
    Triton's walk than torch.relu on TensorIterator's strided loop, a stepped view x[:, ::2]
    0.96x (so it stays on aten)."""
    if FORCE_PATH is not None:
        return FORCE_PATH == "triton"
    if x.nbytes < SMALL_CALL_BYTES:
        return False
    if _is_float8(x.dtype):
        return True
    if dense is None:
        dense = x.is_contiguous() or _is_dense(x)
    elif other is not None:
        dense = dense and _same_strides(other, x)
    if dense:
        return x.dtype == torch.int8 and x.nbytes >= INT8_TRITON_BYTES
    return 1 in x.stride()


def _relu_cuda(x: torch.Tensor) -> torch.Tensor:
    _check_dtype(x)
    if not _takes_triton(x):
        return _torch_relu(x)
    out = torch.empty_like(x)  # x's layout when dense, else dense in x's stride order
    with _OnDeviceOf(x):
        _triton_relu_into(out, x, _is_dense(out) and _is_dense(x))
    return out


def _relu_out_cuda(out: torch.Tensor, x: torch.Tensor) -> None:
    dense = _check_relu_args(out, x)
    if not _takes_triton(x, dense, out):
        _torch_relu_into(out, x, dense)
        return
    with _OnDeviceOf(x):
        _triton_relu_into(out, x, dense)


def _relu_backward_cuda(grad_out: torch.Tensor, result: torch.Tensor) -> torch.Tensor:
    _check_backward_args(grad_out, result)
    if not _takes_triton(result, result.is_contiguous() or _is_dense(result), grad_out):
        return _torch_relu_backward(grad_out, result)
    with _OnDeviceOf(result):
        return _triton_relu_backward(grad_out, result)


# ---- The eager path: what functions.py calls for eager relu() instead of the ops. The same
# kernels as the ops' (above), minus the dispatch into Python and back, for what they are
# certain to serve the op's way: plain tensors (a subclass may handle the op itself) on this
# variant's devices, with no torch function or dispatch mode and no functorch transform
# active (each would see or wrap the op); everything else goes to the op.

_PLAIN_TYPES = frozenset((torch.Tensor, torch.nn.Parameter))
_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_transforms = torch._C._are_functorch_transforms_active
_threshold_backward = torch.ops.aten.threshold_backward.default._op


def eager_kernels_of(ops, backend: str) -> tuple:
    """(relu, relu_out, relu_backward) for functions.py's eager calls, falling back to the
    ops of `ops` (this variant's namespace). relu_backward serves autograd, whose result is
    always relu's output (never NaN, never -0.0): there aten's threshold_backward(grad,
    result, 0), torch.relu's own backward in one kernel, is where(result > 0, grad, 0)."""
    relu_op, relu_out_op, backward_op = ops.relu.default._op, ops.relu_out.default._op, ops.relu_backward.default._op
    cuda = backend == "cuda"

    def direct(t: torch.Tensor) -> bool:
        return (type(t) in _PLAIN_TYPES and (t.is_cpu or (cuda and t.is_cuda))
                and not (_dispatch_modes() or _function_modes() or _transforms()))

    def relu(x):
        if not direct(x):
            return relu_op(x)
        return _relu_cuda(x) if x.is_cuda else _relu_cpu(x)

    def relu_out(out, x):
        if not (direct(x) and direct(out)):
            return relu_out_op(out, x)
        if out.is_cuda:
            _relu_out_cuda(out, x)
        else:
            _relu_out_cpu(out, x)

    def relu_backward(grad_out, result):
        if (direct(result) and type(grad_out) in _PLAIN_TYPES and grad_out.dtype == result.dtype
                and grad_out.is_cuda == result.is_cuda and grad_out.get_device() == result.get_device()
                and grad_out.stride() == result.stride()
                and grad_out.shape == result.shape and result.dtype in _gradient_dtypes()
                and (FORCE_PATH != "triton" or not result.is_cuda)):
            return _threshold_backward(grad_out, result, 0)
        return backward_op(grad_out, result)

    return relu, relu_out, relu_backward


def _gradient_dtypes() -> frozenset:
    return _checker()._dtypes.GRADIENT


def _below_autograd(kernel):
    """The kernel as a compiled one runs: below autograd. The Autograd key falls through to
    these kernels (functions.py), so they can receive tensors that require grad; the torch
    ops they call would then record a graph (and where(out=) refuse), where a C++ kernel
    records nothing."""

    def run(*tensors):
        for tensor in tensors:
            if tensor.requires_grad:
                with torch.no_grad():
                    return kernel(*tensors)
        return kernel(*tensors)

    return run


_LIBRARIES: list = []


def register_ops(namespace: str, backend: str, dtype_table: str):
    """Defines relu, relu_out, relu_backward, dtype_table and cpu_isa under `namespace` (the
    variant's id) with the compiled binding's schemas, with kernels for CPU tensors and, for backend
    "cuda", CUDA tensors; dtype_table() returns `dtype_table` (the binding's table, rendered
    at staging). Returns torch.ops.<namespace>. Once per process: a variant loaded twice
    (kernels and the sys.path route) shares one registration."""
    ops = getattr(torch.ops, namespace)
    if hasattr(ops, "relu"):
        return ops
    library = torch.library.Library(namespace, "DEF")
    library.define("relu(Tensor x) -> Tensor")
    library.define("relu_out(Tensor(a!) out, Tensor x) -> ()")
    library.define("relu_backward(Tensor grad_out, Tensor result) -> Tensor")
    library.define("dtype_table() -> str")
    library.impl("dtype_table", lambda: dtype_table, "CompositeExplicitAutograd")
    # The binding's answer is the SIMD variant its CPU kernel runs; here torch's ops run,
    # with whatever ISA torch picks (the benchmarks record this in their results).
    library.define("cpu_isa() -> str")
    library.impl("cpu_isa", lambda: "torch (no CPU kernel of its own)", "CompositeExplicitAutograd")
    keys = [("CPU", (_relu_cpu, _relu_out_cpu, _relu_backward_cpu))]
    if backend == "cuda":
        keys.append(("CUDA", (_relu_cuda, _relu_out_cuda, _relu_backward_cuda)))
    for key, kernels in keys:
        for op, kernel in zip(("relu", "relu_out", "relu_backward"), kernels):
            library.impl(op, _below_autograd(kernel), key)
    _LIBRARIES.append(library)  # a Library unregisters its ops when collected
    return ops
