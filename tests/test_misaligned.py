"""Operands at every byte offset modulo 16 against each other, for every element size: x at
byte offset a, out at byte offset b of a larger poisoned buffer (every pair 0..15 that the
element size allows), forward and backward (whose two inputs each get their own offset), dense
and a strided case (rows of a 2-D view whose starts differ from out's). Bit-exact against
tests/reference.py, and every byte of the buffer outside out must keep its poison. The CUDA
kernels move out-aligned 16-byte vectors and shift a misaligned input's granules into place
(relu-cuda/memory.cuh): these pin down that shift, the head and tail around it, and that
nothing outside out is written."""

import pytest
import torch

from reference import (
    assert_bitwise_equal,
    poisoned_like,
    random_input,
    reference_relu,
    reference_relu_backward,
)

# One dtype per element size, a second where the kernels compute otherwise (float8 as bits,
# float16 through __hmax2 beside bfloat16's); kept few so that CI stays fast.
FORWARD_DTYPES = [torch.int8, torch.float8_e4m3fn, torch.bfloat16, torch.float16, torch.float32, torch.int64]
BACKWARD_DTYPES = [torch.bfloat16, torch.float32, torch.float64]
# Elements: a head, several whole 16-byte vectors of every element size, and a tail.
LENGTH = 16 * 9 + 7


def offsets(dtype: torch.dtype) -> list[int]:
    """Element offsets that put an operand at every byte offset 0..15 its size allows."""
    return list(range(16 // dtype.itemsize))


def padded(length: int, dtype: torch.dtype) -> int:
    """Elements of a buffer with room for `length` at any offset below 16 bytes, on both sides."""
    return length + 2 * (16 // dtype.itemsize) + 3


def view_at(buffer: torch.Tensor, offset: int, length: int) -> torch.Tensor:
    return buffer[offset : offset + length]


def expected_buffer(poison: torch.Tensor, offset: int, expected: torch.Tensor) -> torch.Tensor:
    """The poisoned buffer with `expected` in out's place: every other byte must be untouched."""
    want = poison.clone()
    view_at(want, offset, expected.shape[0]).copy_(expected)
    return want


@pytest.mark.parametrize("dtype", FORWARD_DTYPES, ids=str)
def test_forward_every_pair_of_byte_offsets(kernel, device, dtype):
    n = padded(LENGTH, dtype)
    source = random_input(n, dtype, device)
    untouched = source.clone()
    poison = poisoned_like(source)
    buffer = torch.empty_like(poison)
    for a in offsets(dtype):
        x = view_at(source, a, LENGTH)
        expected = reference_relu(x)
        for b in offsets(dtype):
            buffer.copy_(poison)
            out = view_at(buffer, b, LENGTH)
            assert kernel.relu(x, out=out) is out
            assert_bitwise_equal(buffer, expected_buffer(poison, b, expected))
        assert_bitwise_equal(kernel.relu(x), expected)  # into a fresh (aligned) result
    assert_bitwise_equal(source, untouched)


@pytest.mark.parametrize("length", [1, 3, 17, 33])
def test_forward_short_lengths_at_every_offset(kernel, device, length):
    # Shorter than two vectors: head and tail only, or one vector between them.
    dtype = torch.int8
    n = padded(length, dtype)
    source = random_input(n, dtype, device)
    poison = poisoned_like(source)
    for a in offsets(dtype):
        x = view_at(source, a, length)
        expected = reference_relu(x)
        for b in offsets(dtype):
            buffer = poison.clone()
            kernel.relu(x, out=view_at(buffer, b, length))
            assert_bitwise_equal(buffer, expected_buffer(poison, b, expected))


@pytest.mark.parametrize("dtype", BACKWARD_DTYPES, ids=str)
def test_backward_every_pair_of_input_offsets(ops, device, dtype):
    # grad_out at offset a, the forward result at offset c: each may differ from the fresh
    # grad_in's alignment and from each other.
    n = padded(LENGTH, dtype)
    grad = random_input(n, dtype, device)
    result = reference_relu(random_input(n, dtype, device))
    for a in offsets(dtype):
        for c in offsets(dtype):
            g, r = view_at(grad, a, LENGTH), view_at(result, c, LENGTH)
            assert_bitwise_equal(ops.relu_backward(g, r), reference_relu_backward(g, r))


@pytest.mark.parametrize("dtype", [torch.int8, torch.bfloat16, torch.float32, torch.float64], ids=str)
def test_strided_rows_misaligned_against_out(kernel, device, dtype):
    # x = rows of a wider buffer from column a: every row starts at a byte offset that differs
    # from out's rows (out: a contiguous block at offset b of a poisoned buffer, rows whose
    # length is not a multiple of 16 bytes, so out's rows themselves start at every offset).
    # Rows of 2 KiB and more take the row kernel's vectors; 2048 + 16 bytes' worth here.
    columns = (2048 + 16) // dtype.itemsize + 1
    rows, pad = 5, 16 // dtype.itemsize
    source = random_input((rows, columns + pad), dtype, device)
    poison = poisoned_like(torch.empty(padded(rows * columns, dtype), dtype=dtype, device=device))
    for a in offsets(dtype)[:: max(1, len(offsets(dtype)) // 4)] + [offsets(dtype)[-1]]:
        x = source[:, a : a + columns]
        expected = reference_relu(x)
        for b in offsets(dtype)[:: max(1, len(offsets(dtype)) // 4)]:
            buffer = poison.clone()
            out = view_at(buffer, b, rows * columns).view(rows, columns)
            kernel.relu(x, out=out)
            assert_bitwise_equal(buffer, expected_buffer(poison, b, expected.reshape(-1)))
        assert_bitwise_equal(kernel.relu(x), expected)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", [torch.int8, torch.bfloat16], ids=str)
def test_streaming_form_misaligned(dtype):
    # Past 3/4 of the L2 (45 MiB on the H200) the dense pass takes its grid-stride loop
    # form with streaming hints: one pair of offsets there, forward and backward.
    from conftest import load_kernel

    cuda_kernel = load_kernel("cuda")
    length = 24 * 2**20 // dtype.itemsize + 5
    n = padded(length, dtype)
    source = random_input(n, dtype, "cuda")
    a, b = 3 % (16 // dtype.itemsize) or 1, 0
    x = view_at(source, a, length)
    poison = poisoned_like(source)
    buffer = poison.clone()
    cuda_kernel.relu(x, out=view_at(buffer, b, length))
    assert_bitwise_equal(buffer, expected_buffer(poison, b, reference_relu(x)))
    if dtype.is_floating_point:
        result = reference_relu(view_at(random_input(n, dtype, "cuda"), 1, length))
        assert_bitwise_equal(cuda_kernel._ops.ops.relu_backward(x, result), reference_relu_backward(x, result))
