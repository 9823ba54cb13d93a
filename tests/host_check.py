"""Builds a C++ checker of the kernels' host-compilable headers with the host's g++: in the
standards kernel-builder compiles with (C++17 before torch 2.12, C++20 from it) and with
UBSan, which catches shifts and overflows that are undefined in C++ and that an optimizer
could turn into wrong bits on another compiler."""

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BUILDS = {
    "c++17": ["-std=c++17", "-O2"],
    "c++20": ["-std=c++20", "-O2"],
    "c++20-ubsan": ["-std=c++20", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all"],
}


def compile_checker(source: Path, build: str, out: Path, extra: tuple[str, ...] = ()) -> Path:
    """`source` compiled with BUILDS[build], warnings as errors and the checkout on the include
    path (plus `extra` arguments) into the executable `out`."""
    compiler = shutil.which("g++")
    assert compiler, "g++ is needed (it also builds the CPU kernel)"
    command = [compiler, *BUILDS[build], "-Wall", "-Wextra", "-Werror", f"-I{ROOT}", *extra,
               str(source), "-o", str(out)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, f"{' '.join(command)}\n{built.stderr}"
    return out


def compile_cuda_host_checker(source: Path, out: Path) -> Path:
    """A checker of headers that include the CUDA runtime's (relu-cuda/launch_policy.h),
    compiled by nvcc as a host program that launches nothing: it runs without a GPU.
    Skips the calling test where nvcc is absent."""
    import pytest

    nvcc = shutil.which("nvcc") or next((str(p) for p in [Path("/usr/local/cuda/bin/nvcc")] if p.exists()), None)
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    command = [nvcc, "-std=c++17", "-O1", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra",
               f"-I{ROOT}", "-x", "cu", str(source), "-o", str(out)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, f"{' '.join(command)}\n{built.stderr}"
    return out
