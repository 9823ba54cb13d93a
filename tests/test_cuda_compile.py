"""The CUDA build compiles, for every architecture build.toml lists, on a machine without a
GPU (CI): scripts/check_cuda_compile.py, which needs only nvcc and pip."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from check_cuda_compile import EXIT_NO_NVCC, find_nvcc  # noqa: E402


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="no nvcc on this machine")
@pytest.mark.skipif(torch.version.cuda is not None,
                    reason="CUDA torch: the suite's own CUDA build compiled these sources already")
def test_cuda_sources_compile_for_every_listed_arch():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_cuda_compile.py")], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    assert done.returncode != EXIT_NO_NVCC, done.stdout
    assert done.returncode == 0, done.stdout
    assert "16-byte ld.global/st.global in all" in done.stdout, done.stdout
    # No stray CUDA context: the device restored only through torch's guard.
    assert "changed only through torch's DeviceGuard" in done.stdout, done.stdout
