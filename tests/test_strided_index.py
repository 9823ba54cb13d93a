"""relu-cuda/strided_index.h, the index arithmetic of the CUDA strided kernels (dividers, each
operand's offsets of a row or an element, row tiles), compiled with the host's g++ and checked
by tests/strided_index_check.cpp against plain 64- and 128-bit arithmetic. Runs on any
machine: the GPU runs the same __host__ __device__ functions."""

import secrets
import subprocess

import pytest

from host_check import BUILDS, ROOT, compile_checker

CHECKER = ROOT / "tests" / "strided_index_check.cpp"


@pytest.mark.parametrize("build", BUILDS)
def test_strided_index_matches_reference(build, tmp_path):
    # No torch header: StridedLayout (relu-common/strided_layout.h) is plain C++.
    checker = compile_checker(CHECKER, build, tmp_path / "check")
    seed = str(secrets.randbits(63))  # fresh layouts every run; the seed is in the output
    run = subprocess.run([str(checker), seed], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].endswith(" checks, 0 failures"), run.stdout
