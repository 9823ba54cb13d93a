"""The torch-cuda variant's one Triton kernel: relu of float8 (_noarch.py), one flat pass over
dense memory on its int8 bit patterns: keep b where 0 < b <= LIMIT, the largest positive
non-NaN pattern, which is x > 0 exactly. Integer compares keep Triton's CPU interpreter (the
tests) exact too. 4096 bytes and 8 warps a block: one 16-byte access per thread."""

import torch
import triton
import triton.language as tl

BLOCK = 4096
NUM_WARPS = 8


@triton.jit
def _relu_float8_kernel(x_ptr, out_ptr, n, LIMIT: tl.constexpr, BLOCK: tl.constexpr, WIDE_INDEX: tl.constexpr):
    pid = tl.program_id(0)
    if WIDE_INDEX:
        pid = pid.to(tl.int64)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    b = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where((b > 0) & (b <= LIMIT), b, tl.zeros_like(b)), mask=mask)


def relu_float8(x_bits: torch.Tensor, out_bits: torch.Tensor, limit: int) -> None:
    """out = relu(x) over int8 views of dense float8 tensors of one layout (out may be x)."""
    n = x_bits.numel()
    if n == 0:
        return
    # Triton launches on the current device; int32 offsets while the last block's fit.
    with torch.cuda.device(x_bits.device if x_bits.is_cuda else -1):
        _relu_float8_kernel[(triton.cdiv(n, BLOCK),)](
            x_bits, out_bits, n, LIMIT=limit, BLOCK=BLOCK, WIDE_INDEX=n + BLOCK >= 2**31, num_warps=NUM_WARPS)
