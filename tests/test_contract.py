"""The public contract of relu(x, out=None), on every backend this machine runs: values
against the independent reference, shapes, layouts, out= in all its forms, and errors
raised before anything is written."""

import threading

import pytest
import torch

from reference import (
    BITS_ONLY_DTYPES,
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    poisoned_like,
    random_input,
    reference_relu,
)

# Around vector widths (16 bytes = 2..16 elements), cache lines and the CPU's task grain.
LENGTHS = [0, 1, 15, 16, 17, 63, 64, 65, 4095, 2**20 + 3]
# Every dtype the kernels take: the reference works on bit patterns for those torch has no
# relu for (float8, uint16/32/64; tests/test_new_dtypes.py has their own checks).
ALL_DTYPES = SUPPORTED_DTYPES + BITS_ONLY_DTYPES


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("length", LENGTHS)
def test_lengths_allocating_and_out(kernel, device, dtype, length):
    x = random_input(length, dtype, device)
    expected = reference_relu(x)
    assert_bitwise_equal(kernel.relu(x), expected)
    out = poisoned_like(x)
    returned = kernel.relu(x, out=out)
    assert returned is out
    assert_bitwise_equal(out, expected)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_zero_dim(kernel, device, dtype):
    for value in ([-3, 0, 5] if not dtype.is_floating_point else [-2.5, -0.0, 0.0, 1.5, float("nan"), float("inf")]):
        if dtype == torch.uint8 and value < 0:
            continue
        x = torch.tensor(value, dtype=dtype, device=device)
        result = kernel.relu(x)
        assert result.dim() == 0
        assert_bitwise_equal(result, reference_relu(x))


@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 3, 4, 5), (1, 1, 1), (0, 4), (4, 0, 3), (7, 1)])
def test_nd_shapes(kernel, device, shape):
    for dtype in (torch.float32, torch.bfloat16, torch.int8):
        x = random_input(shape, dtype, device)
        out = poisoned_like(x)
        kernel.relu(x, out=out)
        assert_bitwise_equal(out, reference_relu(x))
        assert_bitwise_equal(kernel.relu(x), reference_relu(x))


def test_specials_exactly(kernel, device):
    values = [float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-40, -1e-40, 2.0, -2.0]
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        x = torch.tensor(values, dtype=dtype, device=device)
        got = kernel.relu(x).cpu()
        # NaN -> +0, -0.0 -> +0.0, inf stays, -inf -> +0, positive denormals stay (if representable).
        assert not got.isnan().any()
        assert (got >= 0).all()
        assert not torch.signbit(got).any(), "no -0.0 may come out"
        assert got[2] == float("inf") and got[3] == 0
        assert_bitwise_equal(kernel.relu(x), reference_relu(x))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("offset", [1, 3, 7])
def test_unaligned_views(kernel, device, dtype, offset):
    base = random_input(4099 + offset, dtype, device)
    x = base[offset:]
    expected = reference_relu(x)
    assert_bitwise_equal(kernel.relu(x), expected)
    # out at a different misalignment from x, and at the same one.
    for out_offset in (0, offset, offset + 1):
        out_base = poisoned_like(random_input(x.numel() + offset + 1, dtype, device))
        out = out_base[out_offset : out_offset + x.numel()]
        kernel.relu(x, out=out)
        assert_bitwise_equal(out, expected)
        untouched = torch.cat([out_base[:out_offset], out_base[out_offset + x.numel() :]])
        assert_bitwise_equal(untouched, poisoned_like(untouched))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int8, torch.int64], ids=str)
def test_strided_inputs(kernel, device, dtype):
    base = random_input((33, 66), dtype, device)
    views = {
        "every_other": base[:, ::2],
        "transposed": base.t(),
        "column_slice": base[:, 5:40],
        "reversed_via_flip_copy": base.flip(0),
        "expanded_row": base[0].expand(9, 66),
        "diagonal": base.diagonal(),
    }
    for x in views.values():
        expected = reference_relu(x)
        assert_bitwise_equal(kernel.relu(x), expected)
        out = poisoned_like(expected)
        kernel.relu(x, out=out)
        assert_bitwise_equal(out, expected)


def test_dense_layouts_keep_their_layout(kernel, device):
    x = random_input((4, 6, 5, 3), torch.float32, device).to(memory_format=torch.channels_last)
    result = kernel.relu(x)
    assert result.is_contiguous(memory_format=torch.channels_last)
    assert result.stride() == x.stride()
    assert_bitwise_equal(result, reference_relu(x))
    permuted = random_input((5, 7, 3), torch.bfloat16, device).permute(2, 0, 1)
    result = kernel.relu(permuted)
    assert result.stride() == permuted.stride()
    assert_bitwise_equal(result, reference_relu(permuted))


def test_out_of_another_layout(kernel, device):
    x = random_input((4, 6, 5, 3), torch.float16, device)
    expected = reference_relu(x)
    out_cl = poisoned_like(x).to(memory_format=torch.channels_last)
    kernel.relu(x, out=out_cl)
    assert out_cl.is_contiguous(memory_format=torch.channels_last)
    assert_bitwise_equal(out_cl, expected)
    big = poisoned_like(random_input((4, 6, 5, 6), torch.float16, device))
    out_strided = big[..., ::2]
    kernel.relu(x, out=out_strided)
    assert_bitwise_equal(out_strided, expected)
    assert_bitwise_equal(big[..., 1::2], poisoned_like(big[..., 1::2]))


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_in_place(kernel, device, dtype):
    x = random_input(4099, dtype, device)
    expected = reference_relu(x)
    returned = kernel.relu(x, out=x)
    assert returned is x
    assert_bitwise_equal(x, expected)


def test_in_place_on_views(kernel, device):
    for dtype in (torch.float32, torch.int8):
        base = random_input((40, 30), dtype, device)
        for view in (base[1:], base[:, ::3], base.t(), base[3:, 2:17]):
            before_base = base.clone()
            expected = reference_relu(view)
            kernel.relu(view, out=view)
            assert_bitwise_equal(view, expected)
            # Everything outside the view is untouched.
            mask = torch.ones_like(base, dtype=torch.bool)
            mask_view = mask.as_strided(view.shape, view.stride(), view.storage_offset())
            mask_view.fill_(False)
            assert_bitwise_equal(base[mask], before_base[mask])


def test_interleaved_alias_reads_before_writing(kernel, device):
    # x and out interleave in one storage without sharing an element.
    base = random_input((8, 10), torch.float32, device)
    x, out = base[:, 0::2], base[:, 1::2]
    expected = reference_relu(x)
    kernel.relu(x, out=out)
    assert_bitwise_equal(out, expected)


def _assert_rejected(kernel, x, out, error, *words):
    x_before = x.clone()
    out_before = out.clone()
    with pytest.raises(error) as info:
        kernel.relu(x, out=out)
    message = str(info.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"
    assert_bitwise_equal(x, x_before)
    assert_bitwise_equal(out, out_before)


def test_rejects_unsupported_dtypes(kernel, device):
    for dtype in (torch.bool, torch.complex64, torch.float8_e8m0fnu, torch.complex128):
        try:
            x = torch.zeros(8, dtype=dtype, device=device)
        except (RuntimeError, TypeError):
            continue  # this torch cannot even make the tensor
        with pytest.raises(TypeError, match="x has dtype.*supported dtypes are float32"):
            kernel.relu(x)
        out = torch.ones(8, dtype=dtype, device=device)
        with pytest.raises(TypeError, match="x has dtype"):
            kernel.relu(x, out=out)
        assert (out == torch.ones_like(out)).all(), "out was written before the dtype error"


def test_rejects_dtype_mismatch(kernel, device):
    x = random_input(64, torch.float32, device)
    _assert_rejected(kernel, x, poisoned_like(x).half(), TypeError, "out has dtype", "x has dtype")


def test_rejects_shape_mismatch(kernel, device):
    x = random_input((4, 8), torch.float32, device)
    for out in (torch.full((32,), -1.0, device=device), torch.full((4, 9), -1.0, device=device), torch.full((0,), -1.0, device=device)):
        _assert_rejected(kernel, x, out, ValueError, "out has shape", "never resized")


def test_rejects_partial_overlap(kernel, device):
    base = random_input(100, torch.float32, device)
    _assert_rejected(kernel, base[:60], base[10:70], ValueError, "partially overlaps")


def test_rejects_out_with_repeated_elements(kernel, device):
    x = random_input((4, 8), torch.float32, device)
    out = torch.full((8,), -1.0, device=device).expand(4, 8)
    _assert_rejected(kernel, x, out, ValueError, "share memory")


# case -> (x, out) from a float32 x: each mistake both checkers report (the binding's
# argument_checks.h and the package's _checks.py); out=None: the allocating op.
MISTAKES = {
    "x-dtype": lambda x: (x > 0, None),
    "x-dtype-out": lambda x: (x > 0, torch.zeros(x.shape, dtype=torch.bool, device=x.device)),
    "out-dtype": lambda x: (x, torch.zeros(x.shape, dtype=torch.float64, device=x.device)),
    "out-device": lambda x: (x, torch.zeros(x.shape)),  # on a GPU only
    "out-shape": lambda x: (x, torch.zeros(x.numel() + 1, device=x.device)),
    "out-zero-dim": lambda x: (x, torch.zeros((), device=x.device)),
    "out-expanded": lambda x: (x, torch.zeros(1, device=x.device).expand(x.shape)),
}


@pytest.mark.parametrize("case", MISTAKES)
def test_binding_and_python_checker_say_one_text(kernel, ops, device, case):
    """The binding's own error (the op called directly: ValueError, whatever the mistake) and
    the Python checker's (what relu() raises, eager and traced) carry the same words; relu()
    raises it with the checker's type (TypeError for a dtype mistake)."""
    if case == "out-device" and device == "cpu":
        pytest.skip("needs a tensor on a GPU")
    x, out = MISTAKES[case](random_input((2, 3), torch.float32, device))
    with pytest.raises(ValueError) as binding:
        ops.relu(x) if out is None else ops.relu_out(out, x)
    with pytest.raises((TypeError, ValueError)) as checker:
        kernel._checks.check_arguments(x, out)
    assert str(checker.value) == str(binding.value)
    with pytest.raises(type(checker.value)) as eager:
        kernel.relu(x, out=out)
    assert str(eager.value) == str(binding.value)
    assert isinstance(checker.value, TypeError) == case.endswith(("x-dtype", "x-dtype-out", "out-dtype"))


def test_partial_overlap_and_backward_errors_say_the_binding_text(kernel, ops, device):
    """The checks the noarch ops take from _checks.py beyond check_arguments: the partial
    overlap error and relu_backward's, in the op's words and type (ValueError)."""
    base = random_input(100, torch.float32, device)
    with pytest.raises(ValueError) as binding:
        ops.relu_out(base[10:70], base[:60])
    with pytest.raises(ValueError) as checker:
        kernel._checks.raise_partial_overlap()
    assert str(checker.value) == str(binding.value)
    result = random_input((2, 3), torch.float32, device)
    for grad_out, res in [
        (result.to(torch.int8), result.to(torch.int8)),
        (result.double(), result),
        (result[:1], result),
    ] + ([(result.cpu(), result)] if device != "cpu" else []):
        with pytest.raises(ValueError) as binding:
            ops.relu_backward(grad_out, res)
        with pytest.raises(ValueError) as checker:
            kernel._checks.check_backward_arguments(grad_out, res)
        assert str(checker.value) == str(binding.value)


def test_python_dtype_sets_come_from_the_binding_table(kernel, ops):
    """The package's dtype sets are the binding's one table (dtype_table), read at import;
    checked against the tests' own lists, not against that table."""
    dtypes = kernel._dtypes
    assert set(dtypes.SUPPORTED) == set(ALL_DTYPES) and len(dtypes.SUPPORTED_ORDERED) == len(ALL_DTYPES)
    assert set(dtypes.GRADIENT) == set(FLOAT_DTYPES)
    assert dtypes.SUPPORTED_ORDERED == tuple(getattr(torch, e.split("=")[0]) for e in ops.dtype_table().split(","))
    assert dtypes.UNSIGNED == {torch.uint8, torch.uint16, torch.uint32, torch.uint64}
    assert dtypes.WHERE == set(FLOAT_DTYPES) | {torch.int8, torch.int16, torch.int32, torch.int64}
    with pytest.raises(TypeError, match="supported dtypes are " + ", ".join(map(dtypes.name, dtypes.SUPPORTED_ORDERED)) + "$"):
        kernel.relu(torch.zeros(2, dtype=torch.bool))


def test_rejects_non_tensors(kernel):
    with pytest.raises((TypeError, RuntimeError)):
        kernel.relu([1.0, -1.0])
    with pytest.raises((TypeError, RuntimeError)):
        kernel.relu(torch.zeros(3), out=[0.0, 0.0, 0.0])


def test_concurrent_calls_from_threads(kernel, device):
    errors = []

    def worker(seed):
        try:
            generator = torch.Generator().manual_seed(seed)
            for _ in range(20):
                n = int(torch.randint(1, 300_000, (1,), generator=generator))
                x = (torch.randn(n, generator=generator) * 3).to(device)
                out = poisoned_like(x)
                kernel.relu(x, out=out)
                assert_bitwise_equal(out, reference_relu(x))
                assert_bitwise_equal(kernel.relu(x), reference_relu(x))
        except Exception as e:  # surfaced below; a thread's exception would be lost
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_opcheck(ops, device, dtype):
    x = random_input((5, 7), dtype, device)
    torch.library.opcheck(ops.relu.default, (x,))
    torch.library.opcheck(ops.relu_out.default, (poisoned_like(x), x))
    torch.library.opcheck(ops.relu.default, (x.t(),))
