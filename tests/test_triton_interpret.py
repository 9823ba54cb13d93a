"""The noarch torch-cuda variant's Triton kernel (float8, on its int8 bit patterns), on a
machine without a GPU: under Triton's interpreter (TRITON_INTERPRET=1, which must be set
before triton is imported, so in a fresh process: tests/triton_interpret_check.py), on CPU
tensors, every float8 dtype and layout path, against the reference. Without Triton the
variant still serves everything: float8 on CUDA then runs on torch ops."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

TESTS = ROOT / "tests"


@pytest.fixture(scope="module")
def torch_cuda_variant(tmp_path_factory):
    """build/torch-cuda, staged here (Python only: no GPU, no compiler needed)."""
    build_dir = tmp_path_factory.mktemp("noarch") / "build"
    staged = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_variant.py"), "--noarch", "--backend", "cuda",
         "--build-dir", str(build_dir)],
        check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return staged.stdout.strip().splitlines()[-1]


def test_triton_kernels_under_the_interpreter(torch_cuda_variant):
    env = dict(os.environ, TRITON_INTERPRET="1")
    run = subprocess.run([sys.executable, str(TESTS / "triton_interpret_check.py"), torch_cuda_variant],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert run.stdout.strip().endswith("0 failures")


def test_without_triton_float8_takes_torch_ops(torch_cuda_variant):
    # `import triton` fails as it does where Triton is not installed: the variant loads, and
    # its CUDA rule for float8 (run here on CPU tensors) falls back to torch ops.
    script = f"""
import sys, torch
sys.modules["triton"] = None
sys.path.insert(0, {str(TESTS)!r})
sys.path.insert(0, {torch_cuda_variant!r})
import relu
from reference import assert_bitwise_equal, random_input, reference_relu
assert relu.relu(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
noarch = next(m for name, m in sys.modules.items() if name.endswith("_package._noarch"))
next(m for name, m in sys.modules.items() if name.endswith("_package._noarch_rules")).TRITON_MIN_BYTES = 0
x = random_input((64, 1024), torch.float8_e4m3fn, "cpu")
assert_bitwise_equal(noarch.device_kernels("cuda")["relu"][0](x), reference_relu(x))
assert not any(name.endswith("_package._triton") for name in sys.modules)
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.strip().endswith("ok")
