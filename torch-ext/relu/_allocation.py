"""torch's own error for an allocation that fails inside a compiled op.

The binding allocates through the torch stable C shim, which catches torch's error and hands
back only a failure code: relu(x) would raise "torch_call_dispatcher("aten::empty_like", ...)
API call failed" where torch.relu(x) raises the allocator's error (torch.OutOfMemoryError on
CUDA, "DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes" on the
CPU), the error that OOM handlers match (accelerate's find_executable_batch_size, a server
that retries with a smaller batch). functions.py calls this in its except branches only, so
the call path pays nothing until an op has failed."""

import torch

# How the binding words a failed allocation: the stable ABI's macro for a failed shim call
# (torch::stable::empty_like, new_empty, copy_), and its own aoti_torch_empty_strided check.
_SHIM_FAILURES = ("API call failed", "could not allocate")


def raise_torch_allocation_error(error: RuntimeError, like: torch.Tensor) -> None:
    """`error` came from an op over `like` (x, or result for the backward). If it is a failed
    call into torch, the op's largest allocation, a tensor like `like` (x's bytes; dense
    when x is not), is repeated with torch.empty_like: where that fails too, torch's own
    error is raised in place of `error`. Returns otherwise, and the caller re-raises `error`."""
    if not isinstance(like, torch.Tensor) or not any(text in str(error) for text in _SHIM_FAILURES):
        return
    try:
        torch.empty_like(like)
    except RuntimeError as genuine:  # torch.OutOfMemoryError is a RuntimeError
        raise genuine from None
