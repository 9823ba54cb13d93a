"""relu on the dtypes torch has no relu for: float8 (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz) and
uint16/32/64. torch.relu, clamp_min and `x > 0` raise NotImplementedError for them, so the
reference (tests/reference.py) works on bit patterns only; it is checked here against the
float8 format definitions and against torch's own float8 -> float32 conversion. Every
bit pattern, every layout and out= form, on every backend this machine runs; every CPU SIMD
variant; no gradient. (Lengths and unaligned views of these dtypes run in
tests/test_contract.py with every other dtype.)"""

import textwrap

import pytest
import torch

from reference import (
    BITS_ONLY_DTYPES,
    FLOAT8_DTYPES,
    WIDE_UNSIGNED_DTYPES,
    assert_bitwise_equal,
    bits_of,
    float8_positive,
    poisoned_like,
    random_input,
    reference_relu,
)
from test_cpu_isa import run_check

def every_float8_pattern(dtype, device) -> torch.Tensor:
    """The 256 bit patterns of a float8 dtype, 0x00 .. 0xff in order."""
    return torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype).to(device)


# --- the reference itself ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT8_DTYPES, ids=str)
def test_reference_agrees_with_torchs_float8_decoding(dtype):
    """The bit-level reference's x > 0 on every pattern is float32(x) > 0, with torch's own
    conversion deciding (NaN converts to NaN, which is not > 0)."""
    x = every_float8_pattern(dtype, "cpu")
    assert torch.equal(float8_positive(bits_of(x), dtype), x.to(torch.float32) > 0)


def test_reference_keeps_the_landmarks():
    e4m3fn, e5m2 = (reference_relu(every_float8_pattern(d, "cpu")).view(torch.uint8) for d in FLOAT8_DTYPES[:2])
    assert e4m3fn[0x7E] == 0x7E and e4m3fn[0x7F] == 0, "448 kept, NaN -> +0"
    assert e5m2[0x7C] == 0x7C and (e5m2[0x7D:0x80] == 0).all(), "+inf kept, NaNs -> +0"
    for d in FLOAT8_DTYPES:
        out = reference_relu(every_float8_pattern(d, "cpu")).view(torch.uint8)
        assert (out[0x80:] == 0).all(), "sign bit set (negatives, -0, -inf, NaNs) -> +0"
        assert torch.equal(out[1:0x7C], torch.arange(1, 0x7C, dtype=torch.int32).to(torch.uint8))


# --- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT8_DTYPES, ids=str)
def test_every_float8_pattern(kernel, device, dtype):
    """All 256 patterns, allocating, out= a separate tensor and in place."""
    x = every_float8_pattern(dtype, device)
    expected = reference_relu(x)
    assert_bitwise_equal(kernel.relu(x), expected)
    out = poisoned_like(x)
    assert kernel.relu(x, out=out) is out
    assert_bitwise_equal(out, expected)
    inplace = x.clone()
    assert kernel.relu(inplace, out=inplace) is inplace
    assert_bitwise_equal(inplace, expected)
    # Each pattern at every offset within a 16-byte GPU vector and a 32-byte AVX2 vector:
    # patterns repeating with an odd period, 257 (0xff twice per period).
    period = (torch.arange(257 * 33) % 257).clamp(max=255)
    shifted = period.to(torch.uint8).view(dtype).to(device)
    assert_bitwise_equal(kernel.relu(shifted), reference_relu(shifted))
    assert_bitwise_equal(kernel.relu(shifted[3:]), reference_relu(shifted[3:]))


@pytest.mark.parametrize("dtype", WIDE_UNSIGNED_DTYPES, ids=str)
def test_unsigned_is_the_identity(kernel, device, dtype):
    """Values above the signed maximum stay: a signed relu would zero them."""
    bits = bits_of(torch.empty(0, dtype=dtype)).dtype
    info = torch.iinfo(bits)
    signed = torch.tensor([0, 1, -1, info.min, info.max, info.min + 1, -2, 77], dtype=bits)
    x = signed.view(dtype).to(device)
    assert_bitwise_equal(kernel.relu(x), x)
    assert_bitwise_equal(kernel.relu(x, out=poisoned_like(x)), x)


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_zero_dim_and_nd_shapes(kernel, device, dtype):
    for shape in [(), (3, 5, 7), (2, 3, 4, 5), (1, 1, 1), (0, 4), (4, 0, 3), (7, 1)]:
        x = random_input(shape, dtype, device)
        result = kernel.relu(x)
        assert result.shape == x.shape
        assert_bitwise_equal(result, reference_relu(x))
        out = poisoned_like(x)
        kernel.relu(x, out=out)
        assert_bitwise_equal(out, reference_relu(x))


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_strided_inputs_and_outputs(kernel, device, dtype):
    base = random_input((33, 66), dtype, device)
    views = {
        "every_other": base[:, ::2],
        "transposed": base.t(),
        "column_slice": base[:, 5:40],
        "expanded_row": base[0].expand(9, 66),
        "diagonal": base.diagonal(),
    }
    for name, x in views.items():
        expected = reference_relu(x)
        assert_bitwise_equal(kernel.relu(x), expected)
        out = poisoned_like(expected)
        kernel.relu(x, out=out)
        assert_bitwise_equal(out, expected)
        # out strided too: every other column of a poisoned buffer, the rest untouched.
        big = poisoned_like(random_input((x.shape[0], 2 * x.shape[1]) if x.dim() == 2 else (2 * x.shape[0],), dtype, device))
        out_strided = big[..., ::2]
        kernel.relu(x, out=out_strided)
        assert_bitwise_equal(out_strided, expected)
        assert_bitwise_equal(big[..., 1::2], poisoned_like(big[..., 1::2]))


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_dense_layouts_keep_their_layout(kernel, device, dtype):
    x = random_input((4, 6, 5, 3), dtype, device).contiguous(memory_format=torch.channels_last)
    result = kernel.relu(x)
    assert result.stride() == x.stride()
    assert_bitwise_equal(result, reference_relu(x))
    permuted = random_input((5, 7, 3), dtype, device).permute(2, 0, 1)
    result = kernel.relu(permuted)
    assert result.stride() == permuted.stride()
    assert_bitwise_equal(result, reference_relu(permuted))
    out_cl = poisoned_like(random_input((4, 6, 5, 3), dtype, device)).contiguous(memory_format=torch.channels_last)
    contiguous = random_input((4, 6, 5, 3), dtype, device)
    kernel.relu(contiguous, out=out_cl)
    assert out_cl.is_contiguous(memory_format=torch.channels_last)
    assert_bitwise_equal(out_cl, reference_relu(contiguous))


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_in_place(kernel, device, dtype):
    x = random_input(4099, dtype, device)
    expected = reference_relu(x)
    assert kernel.relu(x, out=x) is x
    assert_bitwise_equal(x, expected)
    base = random_input((40, 30), dtype, device)
    for view in (base[1:], base[:, ::3], base.t(), base[3:, 2:17]):
        before = bits_of(base).clone()
        expected = reference_relu(view)
        kernel.relu(view, out=view)
        assert_bitwise_equal(view, expected)
        # Everything outside the view is untouched.
        mask = torch.ones(base.shape, dtype=torch.bool, device=device)
        mask.as_strided(view.shape, view.stride(), view.storage_offset()).fill_(False)
        assert torch.equal(bits_of(base)[mask], before[mask])


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_interleaved_alias_reads_before_writing(kernel, device, dtype):
    base = random_input((8, 10), dtype, device)
    x, out = base[:, 0::2], base[:, 1::2]
    expected = reference_relu(x)
    kernel.relu(x, out=out)
    assert_bitwise_equal(out, expected)


# --- errors --------------------------------------------------------------------------------


def test_same_width_dtype_mismatch_is_rejected(kernel, device):
    """A float8 out for a float8 x of the other format, uint16 for int16: same element size,
    different dtype, rejected before any write."""
    for x_dtype, out_dtype in [
        (torch.float8_e4m3fn, torch.float8_e5m2),
        (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz),
        (torch.float8_e5m2, torch.uint8),
        (torch.int16, torch.uint16),
        (torch.uint64, torch.int64),
    ]:
        x = random_input(64, x_dtype, device)
        out = poisoned_like(random_input(64, out_dtype, device))
        before = bits_of(out).clone()
        with pytest.raises(TypeError, match="out has dtype .* but x has dtype"):
            kernel.relu(x, out=out)
        assert torch.equal(bits_of(out), before)


def test_still_unsupported_dtypes_name_the_new_ones(kernel, device):
    for dtype in (torch.bool, torch.complex64, getattr(torch, "float8_e8m0fnu", torch.complex128)):
        try:
            x = torch.zeros(8, dtype=dtype, device=device)
        except (RuntimeError, TypeError):
            continue  # this torch cannot even make the tensor
        with pytest.raises(TypeError, match="supported dtypes are .*float8_e4m3fn.*uint64") as info:
            kernel.relu(x)
        for dtype_name in ("float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "uint16", "uint32"):
            assert dtype_name in str(info.value)


# --- no gradient ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT8_DTYPES, ids=str)
def test_float8_that_requires_grad_gets_no_silent_gradient(kernel, device, dtype):
    """torch lets a float8 tensor require grad (x.to(float8) of a leaf does). relu has no
    float8 gradient: a call that would record one raises at the call, naming the dtype;
    never a silent or made-up gradient."""
    leaf = random_input(64, dtype, device).requires_grad_(True)
    with pytest.raises(TypeError, match=str(dtype).removeprefix("torch.") + ".*requires grad"):
        kernel.relu(leaf)
    assert leaf.grad is None
    # Without grad recording it is an ordinary call.
    with torch.no_grad():
        assert_bitwise_equal(kernel.relu(leaf), reference_relu(leaf.detach()))
    assert_bitwise_equal(kernel.relu(leaf.detach()), reference_relu(leaf.detach()))
    # out= with an input that requires grad: torch's own out= error, nothing written.
    out = poisoned_like(leaf.detach())
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        kernel.relu(leaf, out=out)
    assert_bitwise_equal(out, poisoned_like(out))


@pytest.mark.parametrize("dtype", WIDE_UNSIGNED_DTYPES, ids=str)
def test_unsigned_has_no_gradient(kernel, device, dtype):
    x = random_input(257, dtype, device)
    with pytest.raises(RuntimeError, match="require gradients"):
        x.requires_grad_(True)
    y = kernel.relu(x)  # grad mode is on: the plain path
    assert not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_backward_op_rejects(ops, device, dtype):
    x = random_input(16, dtype, device)
    with pytest.raises(ValueError, match="result has dtype .*gradients exist for float32"):
        ops.relu_backward(x, x)


# --- torch.library / torch.compile --------------------------------------------------------


@pytest.mark.parametrize("dtype", BITS_ONLY_DTYPES, ids=str)
def test_opcheck(ops, device, dtype):
    # opcheck's schema test compares tensors with torch.allclose, which torch cannot do for
    # float8 on the CPU (nor, perhaps, for uint16/32/64 on a GPU): those get the fake-tensor
    # and AOT-dispatch tests only.
    schema_ok = dtype not in FLOAT8_DTYPES and device == "cpu"
    utils = {} if schema_ok else {"test_utils": ("test_faketensor", "test_aot_dispatch_dynamic")}
    x = random_input((5, 7), dtype, device)
    for op, args in [(ops.relu.default, (x,)), (ops.relu.default, (x.t(),)), (ops.relu_out.default, (poisoned_like(x), x))]:
        torch.library.opcheck(op, args, **utils)


def test_compile_fullgraph(kernel, device):
    compiled = torch.compile(lambda x, out: (kernel.relu(x), kernel.relu(x, out=out)), backend="aot_eager", fullgraph=True)
    for dtype in (torch.float8_e4m3fn, torch.uint32):
        x = random_input(300, dtype, device)
        out = poisoned_like(x)
        y, returned = compiled(x, out)
        assert_bitwise_equal(y, reference_relu(x))
        assert_bitwise_equal(out, reference_relu(x))


# --- every CPU SIMD variant ------------------------------------------------------------------

# Exhaustive float8 patterns at every offset within a 32-byte vector, and random data of
# every length around the vector widths, each variant in a subprocess of its own (the
# variant is chosen once per process: tests/test_cpu_isa.py).
ISA_CHECK = textwrap.dedent(
    """
    import sys, torch
    sys.path.insert(0, {tests!r})
    from kernels import get_kernel
    from reference import BITS_ONLY_DTYPES, FLOAT8_DTYPES, assert_bitwise_equal, random_input, reference_relu
    kernel = get_kernel({repo!r}, version=3, backend="cpu")
    print(kernel._ops.ops.cpu_isa())
    for dtype in FLOAT8_DTYPES:
        patterns = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype)
        for shift in range(33):
            x = torch.cat([patterns[shift:], patterns[:shift]])
            assert_bitwise_equal(kernel.relu(x), reference_relu(x))
            assert_bitwise_equal(kernel.relu(x[shift:]), reference_relu(x[shift:]))
    for dtype in BITS_ONLY_DTYPES:
        for n in (0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 4097, 70001, 300007):
            x = random_input(n, dtype, "cpu")
            assert_bitwise_equal(kernel.relu(x), reference_relu(x))
            assert_bitwise_equal(kernel.relu(x[1:]), reference_relu(x[1:]))
            y = x.clone()
            kernel.relu(y, out=y)
            assert_bitwise_equal(y, reference_relu(x))
    """
)


@pytest.mark.parametrize("isa", ["portable", "avx2", "avx512"])
def test_isa_variant_matches_reference(isa):
    assert run_check(isa, ISA_CHECK).stdout.splitlines()[0] == isa
