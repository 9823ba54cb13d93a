"""kernels-community/activation's fatrelu_and_mul, a peer of relu_and_mul(x, threshold=t) for
benchmarks/gated.py: built from the source vendored in kernels_community_activation/ (its
README says from where) with torch.utils.cpp_extension, for this torch and this GPU. Nothing is
fetched; nothing of it is part of the package.

    python benchmarks/peers/activation_build.py   # build (the H200: about 20-40 s), then a check

load() -> (fatrelu_and_mul, note): the op called as its Hub package calls it,
fatrelu_and_mul(out, x, threshold) with x and out contiguous; or (None, why not): no GPU, no
nvcc, a failed build. The build is kept in .cache/peers/ (ignored by git): a second load in
the same tree only loads it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SOURCES = [HERE / "kernels_community_activation" / name for name in ("fatrelu_and_mul.cu", "binding.cpp")]
# Its build.toml's [torch.stable-abi] cuda = "2.10": the stable headers then hide anything newer.
TARGET_VERSION = "-DTORCH_TARGET_VERSION=0x020a000000000000"


def load(verbose: bool = False):
    if not torch.cuda.is_available():
        return None, "not measured: kernels-community/activation's fatrelu_and_mul is CUDA only"
    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is None:
        return None, "not measured: no CUDA toolkit (nvcc) to build kernels-community/activation's kernel"
    major, minor = torch.cuda.get_device_capability()
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")
    build_dir = ROOT / ".cache" / "peers" / f"kc-activation-torch-{torch.__version__}-sm{major}{minor}"
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "lock").unlink(missing_ok=True)  # torch's build baton, left behind by a build that died
    started = time.time()
    try:
        cpp_extension.load(name="kc_activation_fatrelu", sources=[str(s) for s in SOURCES],
                           extra_cflags=["-O3", TARGET_VERSION], extra_cuda_cflags=["-O3", TARGET_VERSION],
                           build_directory=str(build_dir), with_cuda=True, is_python_module=False, verbose=verbose)
        op = torch.ops.kc_activation.fatrelu_and_mul
    except Exception as exc:  # noqa: BLE001  (the benchmark goes on without this peer)
        return None, f"not measured: the build failed ({type(exc).__name__}: {str(exc)[-400:]})"

    def fatrelu_and_mul(out: torch.Tensor, x: torch.Tensor, threshold: float = 0.0) -> torch.Tensor:
        op(out, x, threshold)
        return out

    seconds = time.time() - started
    return fatrelu_and_mul, (f"kernels-community/activation fatrelu_and_mul (vendored, "
                             f"benchmarks/peers/kernels_community_activation; loaded in {seconds:.0f} s)")


def main() -> None:
    fatrelu_and_mul, note = load(verbose="-v" in sys.argv)
    print(note)
    if fatrelu_and_mul is None:
        sys.exit(1)
    x = torch.randn(7, 2 * 1500, device="cuda")
    a, b = x.chunk(2, dim=-1)
    out = fatrelu_and_mul(torch.empty_like(a), x, 0.25)
    assert torch.equal(out, torch.where(a > 0.25, a, 0) * b), "fatrelu_and_mul: not (a > t ? a : 0) * b"
    print("checked on a 7 x 3000 float32 input")


if __name__ == "__main__":
    main()
