"""Layers for `kernels.kernelize`: drop-in forwards for `torch.nn.ReLU` and squared-ReLU modules.

The kernels layer rules apply: no constructor, no state, the same forward signature as the
layer replaced; only the two capability flags may be added."""

import torch
from torch import nn

from .functions import relu
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
