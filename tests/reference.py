"""The tests' own ReLU and comparison, written from the definition and independent of the
kernels under test: out = x > 0 ? x : 0 (so NaN -> +0 and -0.0 -> +0.0).

The float8 and wide unsigned dtypes (BITS_ONLY_DTYPES) have no comparison, arithmetic or
random numbers in torch on the CPU: for them everything here works on the bit patterns,
through a same-width integer view."""

import math

import torch

SUPPORTED_DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.float64,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.uint8,
]
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
# Supported too, but without a gradient and without torch's own relu: tests/test_new_dtypes.py.
FLOAT8_DTYPES = [torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz]
WIDE_UNSIGNED_DTYPES = [torch.uint16, torch.uint32, torch.uint64]
BITS_ONLY_DTYPES = FLOAT8_DTYPES + WIDE_UNSIGNED_DTYPES
# Same-width integer views: comparing bits tells +0.0 from -0.0 and NaN from NaN.
_BITS = {
    torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float64: torch.int64,
    **{dtype: torch.uint8 for dtype in FLOAT8_DTYPES},
    torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64,
}

# The float8 bit patterns that are NaN, from the format definitions: e4m3fn S.1111.111,
# e5m2 an all-ones exponent with a mantissa (S.11111.01-11), the fnuz formats 0x80 only.
_FLOAT8_NAN = {
    torch.float8_e4m3fn: lambda bits: (bits & 0x7F) == 0x7F,
    torch.float8_e5m2: lambda bits: (bits & 0x7F) > 0x7C,
    torch.float8_e4m3fnuz: lambda bits: bits == 0x80,
    torch.float8_e5m2fnuz: lambda bits: bits == 0x80,
}


def bits_of(x: torch.Tensor) -> torch.Tensor:
    """x's bit patterns as a same-width integer tensor (x itself for other dtypes)."""
    return x.view(_BITS[x.dtype]) if x.dtype in _BITS else x


def float8_positive(bits: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """x > 0 for float8 bit patterns (uint8), from the format: sign clear, not zero, not NaN."""
    bits = bits.to(torch.int32)
    return ((bits & 0x80) == 0) & (bits != 0) & ~_FLOAT8_NAN[dtype](bits)


def reference_relu(x: torch.Tensor) -> torch.Tensor:
    if x.dtype in BITS_ONLY_DTYPES:
        bits = bits_of(x)
        # Unsigned: x > 0 is x != 0. Either way +0 is all bits clear.
        positive = float8_positive(bits, x.dtype) if x.dtype in FLOAT8_DTYPES else bits != 0
        return torch.where(positive, bits, torch.zeros((), dtype=bits.dtype, device=x.device)).view(x.dtype)
    return torch.where(x > 0, x, torch.zeros((), dtype=x.dtype, device=x.device))


def reference_relu_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, grad, torch.zeros((), dtype=grad.dtype, device=grad.device))


def random_input(shape, dtype, device, specials: bool = True) -> torch.Tensor:
    """Fresh random data of every sign; floats also get NaN, +-inf, +-0.0 and denormals."""
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
    if dtype in BITS_ONLY_DTYPES:
        # Uniform random bytes: every bit pattern (NaNs, infinities, -0, unsigned values
        # above the signed maximum) is as likely as any other. `specials` is moot.
        raw = torch.randint(0, 256, (math.prod(shape) * dtype.itemsize,), dtype=torch.uint8)
        return raw.view(dtype).reshape(shape).to(device)
    if dtype.is_floating_point:
        x = torch.randn(shape, dtype=torch.float64) * 3
        if specials and x.numel() > 0:
            flat = x.view(-1)
            specials_list = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, -float("nan"), 1e-40, -1e-40]
            where = torch.randint(0, flat.numel(), (max(1, flat.numel() // 8),))
            flat[where] = torch.tensor(specials_list, dtype=torch.float64)[torch.randint(0, len(specials_list), where.shape)]
        x = x.to(dtype)
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2**62)), min(info.max, 2**62), shape, dtype=torch.int64).to(dtype)
    return x.to(device)


def poisoned_like(x: torch.Tensor) -> torch.Tensor:
    """An output buffer full of a value relu never produces, so unwritten elements show."""
    if x.dtype in BITS_ONLY_DTYPES:
        # Filled through the integer view (fill_ of these dtypes is not on every device):
        # float8 0xb8, a sign bit relu never writes; unsigned 77, as uint8 below.
        return torch.full_like(bits_of(x), 0xB8 if x.dtype in FLOAT8_DTYPES else 77).view(x.dtype)
    # -1 is never a ReLU output; uint8 has no negatives, and relu(x) == x there, so poison
    # with a value, 77, whose survival a random input would almost never explain.
    return torch.full_like(x, 77 if x.dtype == torch.uint8 else -1)


def assert_bitwise_equal(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if a.dtype in _BITS:
        a, e = bits_of(a.contiguous()), bits_of(e.contiguous())
    mismatch = (a != e).nonzero()
    if mismatch.numel() == 0:
        return
    first = tuple(mismatch[0])
    if actual.dtype in BITS_ONLY_DTYPES:  # no repr of the value: show the bits
        mask = (1 << (8 * a.element_size())) - 1
        got, want = f"bits 0x{int(a[first]) & mask:x}", f"bits 0x{int(e[first]) & mask:x}"
    else:
        got, want = repr(actual.detach().cpu()[first]), repr(expected.detach().cpu()[first])
    raise AssertionError(
        f"{mismatch.shape[0]} of {a.numel()} elements differ; first at {mismatch[0].tolist()}: got {got}, expected {want}"
    )
