"""relu: a ReLU kernel for the Hugging Face kernels Hub. See README.md."""

from . import layers
from .functions import relu

__all__ = ["layers", "relu"]
