"""Builds this checkout for every backend the running torch can use, then hands tests the
kernel exactly as users load it: get_kernel(<repo>, version=3) with LOCAL_KERNELS mapping
the repo id to this checkout."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
# Any Hub id works: LOCAL_KERNELS maps it to this checkout, nothing is downloaded.
REPO_ID = "relu-dev/relu"

# RELU_TEST_KERNELS_XPU (with tests/kernels_sees_cuda on PYTHONPATH): kernels sees an XPU
# torch, which has no CUDA; the torch-xpu variant of a RELU_TEST_PREBUILT snapshot is tested
# on CPU tensors (no Intel GPU here), beside the cpu one.
SIMULATED_XPU = bool(os.environ.get("RELU_TEST_KERNELS_XPU"))
BACKENDS = ["cpu"] + (["xpu"] if SIMULATED_XPU else ["cuda"] if torch.version.cuda else [])
# (variant, device of the tensors): every variant built here on every device it serves. The
# CUDA variant serves CPU tensors too, so it is tested on the CPU wherever it is built, GPU
# or not; on CUDA only where a GPU is.
TARGETS = ([("cpu", "cpu")] + [("cuda", "cpu")] * ("cuda" in BACKENDS)
           + [("cuda", "cuda")] * ("cuda" in BACKENDS and torch.cuda.is_available()) + [("xpu", "cpu")] * SIMULATED_XPU)


# `kernels benchmark` runs on the backend kernels detects from torch's build, not on what the
# machine has: a CUDA build of torch without a GPU makes it try CUDA and fail.
runs_kernels_benchmark = pytest.mark.skipif(
    torch.version.cuda is not None and not torch.cuda.is_available(),
    reason="kernels benchmark picks CUDA for a CUDA build of torch, and this machine has no GPU",
)


def target_id(target: tuple[str, str]) -> str:
    backend, device = target
    return backend if backend == device else f"{backend}-variant-on-{device}"


# RELU_TEST_TARGETS="cuda ...": only these targets (ids as above), e.g. the GPU alone on the
# H200 where CI has run the CPU ones.
if os.environ.get("RELU_TEST_TARGETS"):
    TARGETS = [t for t in TARGETS if target_id(t) in os.environ["RELU_TEST_TARGETS"].split()]


def build_command(backend: str) -> list[str]:
    command = [sys.executable, str(ROOT / "scripts" / "build_variant.py"), "--backend", backend]
    archs = os.environ.get("RELU_CUDA_ARCHS")  # e.g. "9.0": a faster build on the H200
    if backend == "cuda" and archs:
        command += ["--cuda-archs", *archs.split()]
    return command


# RELU_TEST_PREBUILT=<dir>: test the binaries in <dir>/build (a staged release snapshot such as
# relu-build/, or a checkout), built on another machine or against another torch: the point
# of the stable ABI. Nothing is built. Unset: this checkout is built for the running torch.
PREBUILT = os.environ.get("RELU_TEST_PREBUILT")
# What LOCAL_KERNELS maps the Hub id to, and where the tests load from.
KERNEL_ROOT = Path(PREBUILT).resolve() if PREBUILT else ROOT

# backend -> build/<variant> the tests load.
VARIANT_DIRS: dict[str, Path] = {}


def variant_kernels_picks(backend: str) -> Path:
    """The variant under build/ that kernels itself would load here for `backend`."""
    from kernels.variants import parse_variant, resolve_variant

    candidates = {parse_variant(d.name): d for d in (KERNEL_ROOT / "build").iterdir() if d.is_dir()}
    resolved = resolve_variant(list(candidates), backend=backend)
    # kernels < 0.15 returns the variant alone (scripts/kernels_minver.sh runs this suite there).
    picked, trace = resolved if isinstance(resolved, tuple) else (resolved, None)
    if picked is None:
        pytest.exit(f"RELU_TEST_PREBUILT: no variant in {KERNEL_ROOT}/build loads here for {backend}: {trace}", 2)
    return candidates[picked]


def pytest_sessionstart(session):
    os.environ["LOCAL_KERNELS"] = f"{REPO_ID}={KERNEL_ROOT}"
    os.environ["HF_HUB_OFFLINE"] = "1"
    for backend in BACKENDS:
        if PREBUILT:
            VARIANT_DIRS[backend] = variant_kernels_picks(backend)
            continue
        built = subprocess.run(build_command(backend), check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        VARIANT_DIRS[backend] = Path(built.stdout.strip().splitlines()[-1])


def is_noarch(variant_dir: Path) -> bool:
    """A noarch variant (torch-cpu, torch-cuda): Python only, its ops registered from Python."""
    from kernels.variants import NoarchVariant, parse_variant

    return isinstance(parse_variant(variant_dir.name), NoarchVariant)


def load_kernel(backend: str):
    from kernels import get_kernel

    return get_kernel(REPO_ID, version=3, backend=backend)


@pytest.fixture(scope="session", params=TARGETS, ids=target_id)
def target(request) -> tuple[str, str]:
    return request.param


@pytest.fixture(scope="session")
def backend(target) -> str:
    """The variant under test: "cpu" or "cuda"."""
    return target[0]


@pytest.fixture(scope="session")
def kernel(backend):
    return load_kernel(backend)


@pytest.fixture(scope="session")
def device(target) -> str:
    """Where the tensors live."""
    return target[1]


@pytest.fixture(scope="session")
def ops(kernel):
    """torch.ops namespace of the loaded build (for opcheck and direct op calls)."""
    return kernel._ops.ops


@pytest.fixture(scope="session")
def variant_dir(backend) -> Path:
    return VARIANT_DIRS[backend]


@pytest.fixture(scope="session")
def noarch(variant_dir) -> bool:
    return is_noarch(variant_dir)


@pytest.fixture
def compiled_variant(noarch):
    """For tests of what only a compiled variant has (its binary, its CPU ISA variants)."""
    if noarch:
        pytest.skip("a noarch variant has no binary: its ops are registered from Python")
