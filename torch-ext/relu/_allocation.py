"""torch's own error for an allocation that fails inside a compiled op: the stable C shim hands
back only a failure code ("API call failed"), where OOM handlers that retry with a smaller
batch match the allocator's error (torch.OutOfMemoryError, the CPU allocator's). Called from
except branches only: the call path pays nothing until an op has failed."""

import torch

# The stable ABI's words for a failed shim call, and the binding's aoti_torch_empty_strided check.
_SHIM_FAILURES = ("API call failed", "could not allocate")


def raise_torch_allocation_error(error: RuntimeError, like: torch.Tensor) -> None:
    """Raises torch's error where `error`, from an op over `like`, is a failed call into torch and
    torch.empty_like(like), the op's largest allocation, fails too; else returns."""
    if not isinstance(like, torch.Tensor) or not any(text in str(error) for text in _SHIM_FAILURES):
        return
    try:
        torch.empty_like(like)
    except RuntimeError as genuine:  # torch.OutOfMemoryError is a RuntimeError
        raise genuine from None
