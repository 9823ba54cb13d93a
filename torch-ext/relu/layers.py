"""Layers for `kernels.kernelize`: drop-in forwards for `torch.nn.ReLU`, squared-ReLU modules and
the gated ReLU MLP activations.

The kernels layer rules apply: no constructor, no state, the same forward signature as the
layer replaced; only the two capability flags may be added."""

import torch
from torch import nn

from .functions import relu
from .gated import relu_and_mul, relu_squared_and_mul
from .squared import relu_squared


class ReLU(nn.Module):
    """Replaces `nn.ReLU.forward`. `inplace=True` on the replaced module is not honoured:
    the result is a new tensor, which is always correct and keeps autograd working."""

    can_torch_compile = True
    has_backward = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return relu(input)


class ReLUSquared(nn.Module):
    """Replaces the forward of a `relu(x) ** 2` module: transformers' `ReLUSquaredActivation`
    (`hidden_act="relu2"`), or any module computing `F.relu(x).square()`."""

    can_torch_compile = True
    has_backward = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return relu_squared(input)


class FatreluAndMul(nn.Module):
    """Replaces vLLM's and kernels-community/activation's `FatreluAndMul` ([..., 2d] -> [..., d]):
    the replaced module's `threshold` attribute is read, 0.0 where it has none."""

    can_torch_compile = True
    has_backward = True
    threshold: float

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_and_mul(x, threshold=getattr(self, "threshold", 0.0))


class ReGLU(nn.Module):
    """ReLU-gated linear unit's activation, TransformerEngine's `reglu`: relu(a) * b."""

    can_torch_compile = True
    has_backward = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_and_mul(x)


class SReGLU(nn.Module):
    """Squared ReGLU, TransformerEngine's `sreglu`: relu(a)**2 * b."""

    can_torch_compile = True
    has_backward = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_squared_and_mul(x)
