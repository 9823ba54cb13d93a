"""The CUDA variants a test that runs in child processes loads by directory: with
RELU_TEST_PREBUILT=<dir>, every CUDA variant of <dir>/build (the release: cu130, cu124 with
its libcudart.so.12 on LD_LIBRARY_PATH, and the noarch torch-cuda); else this checkout's CUDA
build (conftest builds it) and its noarch torch-cuda, staged here (Python only)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import KERNEL_ROOT, PREBUILT, ROOT, VARIANT_DIRS

_STAGED: list[Path] = []


def cuda_variant_dirs() -> list[Path]:
    if PREBUILT:
        return sorted(d for d in (KERNEL_ROOT / "build").iterdir()
                      if d.is_dir() and ("-cu" in d.name or d.name == "torch-cuda"))
    dirs = [VARIANT_DIRS["cuda"]] if "cuda" in VARIANT_DIRS else []
    if not _STAGED:
        staged = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_variant.py"), "--noarch", "--backend",
                                 "cuda", "--build-dir", str(ROOT / ".cache" / "noarch-cuda")],
                                check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        _STAGED.append(Path(staged.stdout.strip().splitlines()[-1]))
    return dirs + _STAGED


def run_child(script: str, variant_dir: Path, *args: str, timeout: int = 300) -> str:
    """`script` in a fresh interpreter (argv[1]: the variant directory, which it loads with
    kernels.get_local_kernel; tests/ on sys.path); its stdout. A variant whose CUDA runtime is
    not in this process's reach (cu124 without libcudart.so.12) skips."""
    done = subprocess.run([sys.executable, "-c", script, str(variant_dir), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT / "tests")
    name = Path(variant_dir).name
    if done.returncode != 0 and "libcudart.so.12" in done.stderr:
        pytest.skip(f"{name}: libcudart.so.12 is not on LD_LIBRARY_PATH")
    assert done.returncode == 0, f"{name}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout
