"""relu: the ReLU family for the Hugging Face kernels Hub. See README.md."""

from . import layers
from .functions import relu
from .gated import relu_and_mul, relu_squared_and_mul
from .squared import relu_squared

__all__ = ["layers", "relu", "relu_and_mul", "relu_squared", "relu_squared_and_mul"]
