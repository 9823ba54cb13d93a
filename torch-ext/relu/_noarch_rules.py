"""relu in torch ops for the noarch variants: one exact op per device and dtype, the table of
docs/noarch.md ("What runs"), which says why each. float8 runs on its int8 bit patterns, on
CUDA from TRITON_MIN_BYTES as one Triton pass (_triton.py)."""

import torch

from ._noarch_layout import is_dense, same_strides

# Triton's launch is Python, dearer than torch's ops on small tensors, and a first call under
# graph capture would compile there.
TRITON_MIN_BYTES = 64 * 1024
_INF = float("inf")
_CPU_ZEROS: dict = {}


def _cpu_zero(dtype: torch.dtype) -> torch.Tensor:
    # 0-dim on the CPU: a CUDA kernel takes it as a scalar argument (nothing on the device).
    if dtype not in _CPU_ZEROS:
        _CPU_ZEROS[dtype] = torch.zeros((), dtype=dtype)
    return _CPU_ZEROS[dtype]


def zero_like(t: torch.Tensor) -> torch.Tensor:
    # where(out=) takes no scalar and copies a CPU zero to the device at every call, which a
    # CUDA graph cannot capture: a device tensor gets its own, filled on its stream.
    return _cpu_zero(t.dtype) if t.is_cpu else t.new_zeros(())


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
            if same_strides(x, result) and is_dense(result):
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
        torch.where(keep, bits, zero_like(bits), out=out.view(torch.int8))
        return out

    return relu


def rule(device_type: str, dtype: torch.dtype):
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
    return lambda x, out: torch.where(x > 0, x, 0) if out is None else torch.where(x > 0, x, zero_like(x), out=out)
