"""The noarch torch-cuda variant's Triton kernels, on a machine without a GPU: under Triton's
interpreter (TRITON_INTERPRET=1, which must be set before triton is imported, so in a fresh
process: tests/triton_interpret_check.py), on CPU tensors, every dtype and layout path,
against the reference. Every dtype runs there on integer views of its bits (_triton.py), so
the interpreter is exact for all sixteen: none is left to GPU-only tests."""

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


def test_missing_triton_is_named_at_the_first_cuda_call(torch_cuda_variant):
    # The variant loads and serves CPU tensors without Triton; the Triton path says what is
    # missing. `import triton` fails as it does where Triton is not installed.
    script = f"""
import sys, torch
sys.modules["triton"] = None
sys.path.insert(0, {torch_cuda_variant!r})
import relu
assert relu.relu(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]
noarch = next(m for name, m in sys.modules.items() if name.endswith("_package._noarch"))
try:
    noarch._triton_kernels()
except ImportError as error:
    print(error)
else:
    raise SystemExit("no error")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Triton" in run.stdout and "install the triton" in run.stdout
