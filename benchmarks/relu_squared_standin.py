"""The relu_squared benchmarks' kernel: this package's build (its `relu_squared` and
`layers.ReLUSquared`), or, with --standin or RELU_SQUARED_STANDIN=1, a stand-in written in
torch with the same public conventions, so that the harnesses run and are tested where no
build has the op yet. The stand-in is never a measurement of the package: results files say
which one ran (meta "kernel_source")."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import torch
from torch import nn


def standin_relu_squared(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """x > 0 ? x*x : 0 in float32, rounded once; empty_like's layout; out= never resized."""
    xf = x.float()
    y = torch.where(xf > 0, xf * xf, torch.zeros((), device=x.device))
    if out is None:
        out = torch.empty_like(x)
    elif out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError(f"out: expected shape {tuple(x.shape)} and {x.dtype}, got {tuple(out.shape)} and {out.dtype}")
    return out.copy_(y)


class StandinReLUSquared(nn.Module):
    can_torch_compile = True
    has_backward = True

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        # Differentiable through torch's autograd (the real layer saves x alike).
        xf = input.float()
        return torch.where(xf > 0, xf * xf, torch.zeros((), device=input.device)).to(input.dtype)


def standin_module() -> types.ModuleType:
    module = types.ModuleType("relu_squared_standin_kernel")
    module.relu_squared = standin_relu_squared
    module.layers = types.SimpleNamespace(ReLUSquared=StandinReLUSquared)
    return module


def wants_standin(flag: bool) -> bool:
    return flag or os.environ.get("RELU_SQUARED_STANDIN", "") not in ("", "0")


def load_kernel(path: Path, device: str, standin: bool = False):
    """(kernel, source): the stand-in, or the build at `path` for `device`, which must have
    relu_squared and layers.ReLUSquared."""
    if wants_standin(standin):
        return standin_module(), "stand-in (torch, benchmarks/relu_squared_standin.py)"
    from timing import load_build  # beside this file; every script here puts it on sys.path

    kernel = load_build(path, device)
    if not hasattr(kernel, "relu_squared") or not hasattr(kernel.layers, "ReLUSquared"):
        sys.exit(f"{path}: this build has no relu_squared / layers.ReLUSquared; build a checkout that has the op, "
                 "or pass --standin (RELU_SQUARED_STANDIN=1) to run the harness on the torch stand-in")
    return kernel, f"build {path}"
