"""The kernel of the benchmarks of the newer ops (relu_squared, and the gated relu_and_mul and
relu_squared_and_mul): this package's build, or, with --standin or RELU_SQUARED_STANDIN=1, a
stand-in written in torch with the same public conventions, so that the harnesses run and are
tested where no build has the ops yet (a GPU before their CUDA kernels). The stand-in is never
a measurement of the package: results files say which one ran (meta "kernel_source")."""

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


def _gated(x: torch.Tensor, squared: bool, threshold: float) -> torch.Tensor:
    """gate(a) * b in float32, rounded once; differentiable through torch's autograd."""
    d = x.shape[-1] // 2
    a, b = x[..., :d].float(), x[..., d:].float()
    t = float(torch.tensor(threshold, dtype=torch.float32))  # the threshold in float32
    zero = torch.zeros((), device=x.device)
    return (torch.where(a > 0, a * a, zero) if squared else torch.where(a > t, a, zero)) * b


def _into(y: torch.Tensor, x: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    if out is None:
        return y.to(x.dtype)
    if out.shape != y.shape or out.dtype != x.dtype:
        raise ValueError(f"out: expected shape {tuple(y.shape)} and {x.dtype}, got {tuple(out.shape)} and {out.dtype}")
    return out.copy_(y)


def standin_relu_and_mul(x: torch.Tensor, out: torch.Tensor | None = None, threshold: float = 0.0) -> torch.Tensor:
    return _into(_gated(x, False, threshold), x, out)


def standin_relu_squared_and_mul(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    return _into(_gated(x, True, 0.0), x, out)


class _StandinGated(nn.Module):
    can_torch_compile = True
    has_backward = True
    squared = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _gated(x, self.squared, getattr(self, "threshold", 0.0)).to(x.dtype)


class StandinFatreluAndMul(_StandinGated):
    pass


class StandinReGLU(_StandinGated):
    pass


class StandinSReGLU(_StandinGated):
    squared = True


def standin_fatrelu_and_mul(out: torch.Tensor, x: torch.Tensor, threshold: float = 0.0) -> torch.Tensor:
    """kernels-community/activation's fatrelu_and_mul(out, x, t) in torch, for gated.py's
    paths where its CUDA build is not (the CPU): (float(a) > t ? a : 0) * b in x's dtype."""
    d = x.shape[-1] // 2
    a, b = x[..., :d], x[..., d:]
    t = float(torch.tensor(threshold, dtype=torch.float32))
    return out.copy_(torch.where(a.float() > t, a, torch.zeros((), dtype=x.dtype)) * b)


def standin_module() -> types.ModuleType:
    module = types.ModuleType("relu_squared_standin_kernel")
    module.relu_squared = standin_relu_squared
    module.relu_and_mul = standin_relu_and_mul
    module.relu_squared_and_mul = standin_relu_squared_and_mul
    module.layers = types.SimpleNamespace(ReLUSquared=StandinReLUSquared, FatreluAndMul=StandinFatreluAndMul,
                                          ReGLU=StandinReGLU, SReGLU=StandinSReGLU)
    return module


def wants_standin(flag: bool) -> bool:
    return flag or os.environ.get("RELU_SQUARED_STANDIN", "") not in ("", "0")


def load_kernel(path: Path, device: str, standin: bool = False,
                needs: tuple[str, ...] = ("relu_squared", "layers.ReLUSquared")):
    """(kernel, source): the stand-in, or the build at `path` for `device`, which must have
    every attribute in `needs` ("layers.X": a layer)."""
    if wants_standin(standin):
        return standin_module(), "stand-in (torch, benchmarks/relu_squared_standin.py)"
    from timing import load_build  # beside this file; every script here puts it on sys.path

    kernel = load_build(path, device)
    missing = [name for name in needs if not hasattr(kernel.layers if name.startswith("layers.") else kernel,
                                                         name.removeprefix("layers."))]
    if missing:
        sys.exit(f"{path}: this build has no {' / '.join(missing)}; build a checkout that has the ops, "
                 "or pass --standin (RELU_SQUARED_STANDIN=1) to run the harness on the torch stand-in")
    return kernel, f"build {path}"
