"""relu-cuda/strided_index.h, the index arithmetic of the CUDA strided kernels (dividers, each
operand's offsets of a row or an element, row tiles), compiled with the host's g++ and checked
by tests/strided_index_check.cpp against plain 64- and 128-bit arithmetic. Runs on any
machine: the GPU runs the same __host__ __device__ functions."""

import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
import torch.utils.cpp_extension

ROOT = Path(__file__).resolve().parent.parent
CHECKER = ROOT / "tests" / "strided_index_check.cpp"

# As tests/test_relu_element.py: C++17 and C++20 (kernel-builder's standards before and from
# torch 2.12), and a UBSan build for shifts and overflows an optimizer could exploit.
BUILDS = {
    "c++17": ["-std=c++17", "-O2"],
    "c++20": ["-std=c++20", "-O2"],
    "c++20-ubsan": ["-std=c++20", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all"],
}


@pytest.mark.parametrize("build", BUILDS)
def test_strided_index_matches_reference(build, tmp_path):
    compiler = shutil.which("g++")
    assert compiler, "g++ is needed (it also builds the CPU kernel)"
    # torch's header-only dtype enum, through torch-ext/torch_binding.h (StridedLayout).
    includes = [arg for path in torch.utils.cpp_extension.include_paths() for arg in ("-isystem", path)]
    checker = tmp_path / "check"
    command = [compiler, *BUILDS[build], "-Wall", "-Wextra", "-Werror", f"-I{ROOT}", *includes,
               str(CHECKER), "-o", str(checker)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, f"{' '.join(command)}\n{built.stderr}"
    seed = str(secrets.randbits(63))  # fresh layouts every run; the seed is in the output
    run = subprocess.run([str(checker), seed], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].endswith(" checks, 0 failures"), run.stdout
