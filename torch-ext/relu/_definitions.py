"""relu_squared's definition in torch ops (relu-common/relu_squared_element.h): computed in
float32 (float64 for float64) and rounded once to x's dtype. What Inductor fuses under
torch.compile and what the noarch variants run; no import of the package's ops."""

import torch

_HALF = (torch.float16, torch.bfloat16)


def _opmath(t: torch.Tensor) -> torch.Tensor:
    return t.float() if t.dtype in _HALF else t


def relu_squared_forward(x: torch.Tensor) -> torch.Tensor:
    """x > 0 ? x * x : 0."""
    xf = _opmath(x)
    return torch.where(xf > 0, xf * xf, 0).to(x.dtype)


def relu_squared_backward(grad_out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x > 0 ? (2 * x) * grad_out : 0, a select: grad_out where x <= 0 is never read."""
    xf = _opmath(x)
    return torch.where(xf > 0, (2 * xf) * _opmath(grad_out), 0).to(x.dtype)
