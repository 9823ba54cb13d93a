"""The tests' own ReLU and comparison, written from the definition and independent of the
kernels under test: out = x > 0 ? x : 0 (so NaN -> +0 and -0.0 -> +0.0)."""

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
# Same-width integer views: comparing bits tells +0.0 from -0.0 and NaN from NaN.
_BITS = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float64: torch.int64}


def reference_relu(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x, torch.zeros((), dtype=x.dtype, device=x.device))


def reference_relu_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, grad, torch.zeros((), dtype=grad.dtype, device=grad.device))


def random_input(shape, dtype, device, specials: bool = True) -> torch.Tensor:
    """Fresh random data of every sign; floats also get NaN, +-inf, +-0.0 and denormals."""
    shape = tuple(shape) if not isinstance(shape, int) else (shape,)
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
    # -1 is never a ReLU output; uint8 has no negatives, and relu(x) == x there, so poison
    # with a value, 77, whose survival a random input would almost never explain.
    return torch.full_like(x, 77 if x.dtype == torch.uint8 else -1)


def assert_bitwise_equal(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if a.dtype in _BITS:
        a, e = a.contiguous().view(_BITS[a.dtype]), e.contiguous().view(_BITS[e.dtype])
    mismatch = (a != e).nonzero()
    assert mismatch.numel() == 0, (
        f"{mismatch.shape[0]} of {a.numel()} elements differ; first at {mismatch[0].tolist()}: "
        f"got {actual.detach().cpu()[tuple(mismatch[0])]!r}, expected {expected.detach().cpu()[tuple(mismatch[0])]!r}"
    )
