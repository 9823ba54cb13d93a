"""relu: the ReLU family for the Hugging Face kernels Hub. See README.md."""

from . import layers
from .functions import relu
from .squared import relu_squared

__all__ = ["layers", "relu", "relu_squared"]
