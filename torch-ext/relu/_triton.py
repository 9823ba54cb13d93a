"""The Triton kernels of the noarch torch-cuda variant: relu on bit patterns.

Imported on the first CUDA call only (_noarch.py), so a CPU user never needs Triton. Every
dtype runs on a same-width integer view of its bits, where relu is integer logic:

  - signed integers:          keep b if b > 0;
  - IEEE floats and float8:   keep b if 0 < b <= the bits of the largest positive non-NaN
                              value (+inf where the format has one), which is x > 0 exactly:
                              the sign bit clear, not +0, not a NaN; -0.0 and NaN become +0;
  - unsigned integers:        a copy (never negative).

Integer compares also keep the Triton interpreter exact (TRITON_INTERPRET=1, the CPU tests):
it stores bfloat16 and float8 as bit patterns and its float arithmetic on them is not to be
trusted. Launch shape: BLOCK 4096 elements and 8 warps, the plain Triton ReLU that ran at
0.96-0.97x the compiled kernel from 64 MiB and at parity for int8 (H200, Triton 3.6).

Layouts: a flat pass over dense memory, or a walk of up to MAX_DIMS dimensions (the merged
StridedLayout of the compiled binding, innermost first) in tiles of rows x columns."""

import triton
import triton.language as tl

BLOCK = 4096
NUM_WARPS = 8
# Dimensions a walk takes after merging: chunks, stepped slices, transposes and 3-D permuted
# slices fit; a layout with more is copied to dense memory first (_noarch.py).
MAX_DIMS = 4
# A walk's tile: BLOCK elements, the row (innermost dimension) up to MAX_ROW_BLOCK of them.
MAX_ROW_BLOCK = 1024


@triton.jit
def _keep(b, MODE: tl.constexpr, LIMIT: tl.constexpr):
    # MODE: _noarch.py's MODE_SIGNED (1) or MODE_BOUNDED (2); MODE_COPY (0) selects nothing.
    # One return per function: early returns are not Triton's to compile on every version.
    if MODE == 1:
        keep = b > 0
    else:
        keep = (b > 0) & (b <= LIMIT)
    return keep


@triton.jit
def _relu_bits(b, MODE: tl.constexpr, LIMIT: tl.constexpr):
    if MODE == 0:
        result = b
    else:
        result = tl.where(_keep(b, MODE, LIMIT), b, tl.zeros_like(b))
    return result


@triton.jit
def _flat_block(n, BLOCK: tl.constexpr, WIDE_INDEX: tl.constexpr):
    """This program's BLOCK offsets of a flat pass, and their mask."""
    pid = tl.program_id(0)
    if WIDE_INDEX:
        pid = pid.to(tl.int64)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    return offsets, offsets < n


@triton.jit
def _relu_flat_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, WIDE_INDEX: tl.constexpr,
                      MODE: tl.constexpr, LIMIT: tl.constexpr):
    offsets, mask = _flat_block(n, BLOCK, WIDE_INDEX)
    b = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, _relu_bits(b, MODE, LIMIT), mask=mask)


@triton.jit
def _relu_backward_flat_kernel(grad_ptr, result_ptr, grad_in_ptr, n, BLOCK: tl.constexpr,
                               WIDE_INDEX: tl.constexpr, LIMIT: tl.constexpr):
    offsets, mask = _flat_block(n, BLOCK, WIDE_INDEX)
    g = tl.load(grad_ptr + offsets, mask=mask)
    r = tl.load(result_ptr + offsets, mask=mask)
    tl.store(grad_in_ptr + offsets, tl.where(_keep(r, 2, LIMIT), g, tl.zeros_like(g)), mask=mask)


@triton.jit
def _tile(size0, size1, size2, size3, ROW_BLOCK: tl.constexpr, ROWS: tl.constexpr):
    """This program's tile: column indices along dimension 0 (the row), indices along
    dimensions 1-3 of each of its ROWS rows, and the mask. int64 throughout: a view may span
    more than 2^31 elements of its storage."""
    pid = tl.program_id(0).to(tl.int64)
    row_blocks = tl.cdiv(size0, ROW_BLOCK)
    columns = (pid % row_blocks) * ROW_BLOCK + tl.arange(0, ROW_BLOCK).to(tl.int64)
    rows = (pid // row_blocks) * ROWS + tl.arange(0, ROWS).to(tl.int64)
    i1 = rows % size1
    i2 = (rows // size1) % size2
    i3 = rows // size1 // size2
    mask = (i3 < size3)[:, None] & (columns < size0)[None, :]
    return columns, i1, i2, i3, mask


@triton.jit
def _offsets(columns, i1, i2, i3, s0, s1, s2, s3):
    return (i1 * s1 + i2 * s2 + i3 * s3)[:, None] + (columns * s0)[None, :]


@triton.jit
def _relu_strided_kernel(x_ptr, out_ptr, size0, size1, size2, size3,
                         o0, o1, o2, o3, x0, x1, x2, x3,
                         ROW_BLOCK: tl.constexpr, ROWS: tl.constexpr,
                         MODE: tl.constexpr, LIMIT: tl.constexpr):
    columns, i1, i2, i3, mask = _tile(size0, size1, size2, size3, ROW_BLOCK, ROWS)
    b = tl.load(x_ptr + _offsets(columns, i1, i2, i3, x0, x1, x2, x3), mask=mask)
    tl.store(out_ptr + _offsets(columns, i1, i2, i3, o0, o1, o2, o3), _relu_bits(b, MODE, LIMIT), mask=mask)


@triton.jit
def _relu_backward_strided_kernel(grad_ptr, result_ptr, grad_in_ptr, size0, size1, size2, size3,
                                  i_0, i_1, i_2, i_3, g0, g1, g2, g3, r0, r1, r2, r3,
                                  ROW_BLOCK: tl.constexpr, ROWS: tl.constexpr, LIMIT: tl.constexpr):
    columns, i1, i2, i3, mask = _tile(size0, size1, size2, size3, ROW_BLOCK, ROWS)
    g = tl.load(grad_ptr + _offsets(columns, i1, i2, i3, g0, g1, g2, g3), mask=mask)
    r = tl.load(result_ptr + _offsets(columns, i1, i2, i3, r0, r1, r2, r3), mask=mask)
    tl.store(grad_in_ptr + _offsets(columns, i1, i2, i3, i_0, i_1, i_2, i_3),
             tl.where(_keep(r, 2, LIMIT), g, tl.zeros_like(g)), mask=mask)


def _wide_index(n: int) -> bool:
    # int32 offsets while the last program's cannot overflow: cheaper address arithmetic.
    return n + BLOCK >= 2**31


def relu_flat(x_bits, out_bits, n: int, mode: int, limit: int) -> None:
    """out = relu(x) over n elements of dense memory (integer views; out may be x)."""
    _relu_flat_kernel[(triton.cdiv(n, BLOCK),)](
        x_bits, out_bits, n, BLOCK=BLOCK, WIDE_INDEX=_wide_index(n), MODE=mode, LIMIT=limit,
        num_warps=NUM_WARPS)


def relu_backward_flat(grad_bits, result_bits, grad_in_bits, n: int, limit: int) -> None:
    _relu_backward_flat_kernel[(triton.cdiv(n, BLOCK),)](
        grad_bits, result_bits, grad_in_bits, n, BLOCK=BLOCK, WIDE_INDEX=_wide_index(n),
        LIMIT=limit, num_warps=NUM_WARPS)


def _walk_shape(sizes: list[int]) -> tuple[list[int], int, int, int]:
    """Sizes padded to MAX_DIMS, the tile (row block, rows) and the number of programs."""
    sizes = sizes + [1] * (MAX_DIMS - len(sizes))
    row_block = min(triton.next_power_of_2(sizes[0]), MAX_ROW_BLOCK)
    rows = BLOCK // row_block
    outer = sizes[1] * sizes[2] * sizes[3]
    return sizes, row_block, rows, triton.cdiv(sizes[0], row_block) * triton.cdiv(outer, rows)


def _padded(strides: list[int]) -> list[int]:
    return strides + [0] * (MAX_DIMS - len(strides))


def relu_strided(x_bits, out_bits, sizes: list[int], out_strides: list[int], x_strides: list[int],
                 mode: int, limit: int) -> None:
    """out = relu(x) over a walk of len(sizes) <= MAX_DIMS dimensions, innermost first."""
    sizes, row_block, rows, programs = _walk_shape(sizes)
    _relu_strided_kernel[(programs,)](
        x_bits, out_bits, *sizes, *_padded(out_strides), *_padded(x_strides),
        ROW_BLOCK=row_block, ROWS=rows, MODE=mode, LIMIT=limit, num_warps=NUM_WARPS)


def relu_backward_strided(grad_bits, result_bits, grad_in_bits, sizes: list[int],
                          grad_in_strides: list[int], grad_strides: list[int],
                          result_strides: list[int], limit: int) -> None:
    sizes, row_block, rows, programs = _walk_shape(sizes)
    _relu_backward_strided_kernel[(programs,)](
        grad_bits, result_bits, grad_in_bits, *sizes, *_padded(grad_in_strides),
        *_padded(grad_strides), *_padded(result_strides),
        ROW_BLOCK=row_block, ROWS=rows, LIMIT=limit, num_warps=NUM_WARPS)
