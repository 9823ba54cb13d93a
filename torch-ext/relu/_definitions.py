"""relu_squared's definition in torch ops (relu-common/relu_squared_element.h): computed in
float32 (float64 for float64) and rounded once to x's dtype. What Inductor fuses under
torch.compile and what the noarch variants run; no import of the package's ops."""

import torch

_HALF = (torch.float16, torch.bfloat16)


def _opmath(t: torch.Tensor) -> torch.Tensor:
    return t.float() if t.dtype in _HALF else t


def relu_squared_forward(x: torch.Tensor) -> torch.Tensor:
    """x > 0 ? x * x : 0, as r * r with r = relu(x): autograd's gradient of this form is
    x > 0 ? 2 * x * grad : 0 as a select (grad * r doubled, then where), which Inductor fuses."""
    xf = _opmath(x)
    r = torch.where(xf > 0, xf, 0)
    return (r * r).to(x.dtype)


def relu_squared_backward(grad_out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x > 0 ? (2 * x) * grad_out : 0, a select: grad_out where x <= 0 is never read."""
    xf = _opmath(x)
    return torch.where(xf > 0, (2 * xf) * _opmath(grad_out), 0).to(x.dtype)


def _gate(a: torch.Tensor, gate: str, threshold: float) -> torch.Tensor:
    # Written so that autograd's gradient through it is a select on a (see relu_squared_forward).
    if gate == "relu_and_mul":
        return torch.where(a > threshold, a, 0)
    r = torch.where(a > 0, a, 0)
    return r * r


def _halves(x: torch.Tensor):
    d = x.shape[-1] // 2
    return _opmath(x[..., :d]), _opmath(x[..., d:])


def gated_forward(gate: str, x: torch.Tensor, threshold: float = 0.0) -> torch.Tensor:
    """gate(a) * b over x = [a, b] (relu-common/gated_element.h): [..., 2d] -> [..., d]."""
    a, b = _halves(x)
    return (_gate(a, gate, threshold) * b).to(x.dtype)


def gated_backward(gate: str, grad_out: torch.Tensor, x: torch.Tensor, threshold: float = 0.0) -> torch.Tensor:
    """[grad_a, grad_b], [..., 2d]: grad_a a select on a, grad_b = grad_out * gate(a)."""
    a, b = _halves(x)
    g = _opmath(grad_out)
    if gate == "relu_and_mul":
        grad_a = torch.where(a > threshold, g * b, 0)
    else:
        grad_a = torch.where(a > 0, ((2 * a) * b) * g, 0)
    grad_b = g * _gate(a, gate, threshold)
    return torch.cat([grad_a.to(x.dtype), grad_b.to(x.dtype)], dim=-1)
