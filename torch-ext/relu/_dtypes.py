"""The dtypes relu takes, read at import from the binding's one table (relu-common/relu_dtypes.h,
through the op dtype_table): the package writes no list of its own."""

import torch

from ._ops import ops


def _read_table() -> tuple[tuple[torch.dtype, bool], ...]:
    # "float32=1,...,int8=0,...": torch.<name> and whether relu has a gradient in it.
    rows = []
    for entry in ops.dtype_table().split(","):
        name, has_gradient = entry.split("=")
        rows.append((getattr(torch, name), has_gradient == "1"))
    return tuple(rows)


_TABLE = _read_table()

SUPPORTED_ORDERED = tuple(dtype for dtype, _ in _TABLE)
GRADIENT_ORDERED = tuple(dtype for dtype, has_gradient in _TABLE if has_gradient)
SUPPORTED = frozenset(SUPPORTED_ORDERED)
GRADIENT = frozenset(GRADIENT_ORDERED)

# How relu is traced (functions.py): a copy, where(x > 0, x, 0), or (float8) the op.
UNSIGNED = frozenset(d for d in SUPPORTED if not d.is_floating_point and not d.is_signed)
WHERE = frozenset(d for d in SUPPORTED if d in GRADIENT or (not d.is_floating_point and d.is_signed))


def name(dtype: torch.dtype) -> str:
    """The name a user knows (float32), as the binding's messages write it."""
    return str(dtype).removeprefix("torch.")
