"""tensor_geometry.h's layout predicates and overlap rule, written once in Python for the noarch
variants (_noarch.py, _noarch_rules.py)."""

import math

import torch


def same_strides(a: torch.Tensor, b: torch.Tensor) -> bool:
    return all(size == 1 or sa == sb for size, sa, sb in zip(a.shape, a.stride(), b.stride()))


def is_dense(t: torch.Tensor) -> bool:
    """torch's is_non_overlapping_and_dense: some order of the dimensions is contiguous."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def may_share_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The byte spans; then, when neither is dense, the gcd g of both tensors' byte strides:
    every element of a starts a multiple of g from a's start, every one of b from b's, so none
    meet when b's offset from a modulo g leaves an element's width to either side."""
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
    if not meet or is_dense(a) or is_dense(b) or g == 0:  # g 0: single elements
        return meet
    phase = (b.data_ptr() - a.data_ptr()) % g
    return phase < width or phase > g - width
