"""The release set: every variant scripts/release.sh builds and stages, declared once. The
release command, the staging and tests/test_variants.py read it; nothing else names variants.

    python scripts/release_set.py           one line per variant: its name, then its
                                            scripts/build_variant.py arguments (release.sh)
    python scripts/release_set.py --table   name, backend, CPU, toolchain, CUDA archs
    python scripts/release_set.py --other-cuda
                                            the CUDA variants for another CUDA major than this
                                            torch's, one line each: name, CUDA, toolchain script
                                            (release.sh tests them in a second pass)

A Python table rather than TOML beside build.toml: build.toml is kernel-builder's input and
kernels' parser validates it, while this list is our release's and needs code anyway (each
row's CUDA archs follow from build.toml by kernel-builder's rule, scripts/cuda_archs.py).
A row is one ReleaseVariant: a new platform or toolchain adds rows, not code paths. The noarch
rows (torch-cpu, torch-cuda, torch-xpu: kernel-builder's noarch variants, Python only, staged
by scripts/build_variant.py --noarch) are ReleaseVariants too, with the PYTHON_ONLY toolchain:
kernels accepts one on any torch and CPU whose backend is its own and ranks it after every
accepted compiled variant, so it serves only where no compiled one loads (torch < 2.11,
CUDA 12 on aarch64, CUDA 11; every XPU torch).
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from cuda_archs import variant_archs

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Toolchain:
    """What compiles a variant."""

    description: str
    cuda: str | None = None  # the CUDA release its nvcc compiles for, which names the variant
    # A script printing the CUDA_HOME to build with (fetching the toolkit on first use);
    # None: the nvcc this machine has.
    cuda_home_script: str | None = None
    # A cross toolchain: the script printing the env file that build_variant.py --target
    # reads (release.sh sources it); None: a native build.
    cross_env_script: str | None = None


HOST_GCC = Toolchain("this machine's g++ (12)")
HOST_NVCC_13 = Toolchain("this machine's nvcc 13.0, g++ 12 as host compiler", cuda="13.0")
DEBIAN_CUDA_12_4 = Toolchain("CUDA 12.4.131 from Debian 13 trixie non-free (scripts/toolchains/cuda12.sh), "
                             "g++ 12 as host compiler", cuda="12.4",
                             cuda_home_script="scripts/toolchains/cuda12.sh")
AARCH64_CROSS = Toolchain("Debian's aarch64-linux-gnu-g++ 12 against aarch64 torch 2.13.0 from PyPI "
                          "(scripts/toolchains/aarch64.sh)", cross_env_script="scripts/toolchains/aarch64.sh")
AARCH64_CROSS_NVCC_13 = Toolchain("this machine's nvcc 13.0, Debian's aarch64-linux-gnu-g++ 12 as host compiler, "
                                  "against aarch64 torch 2.13.0 and libcudart from PyPI (scripts/toolchains/aarch64.sh)",
                                  cuda="13.0", cross_env_script="scripts/toolchains/aarch64.sh")
# Nothing compiles a noarch variant: its ops are registered from Python (torch-ext/relu/_noarch.py).
PYTHON_ONLY = Toolchain("none: Python only (torch-ext/relu/_noarch.py registers the ops)")


@dataclass(frozen=True)
class ReleaseVariant:
    name: str  # build/<name>, as kernels spells it and build_variant.py names it
    backend: str  # build_variant.py --backend
    toolchain: Toolchain
    platform: str = "x86_64"  # the CPU it runs on, as kernels spells it; "any" for noarch
    cuda_archs: tuple[str, ...] = ()  # --cuda-archs; () for kernel-builder's from build.toml

    @property
    def noarch(self) -> bool:
        return self.toolchain is PYTHON_ONLY

    def archs(self) -> tuple[str, ...]:
        """The CUDA archs the binary holds (metadata.json's backend.archs); () for no CUDA
        binary (a noarch torch-cuda lists none: Triton compiles for the GPU it finds)."""
        if self.toolchain.cuda is None:
            return ()
        if self.cuda_archs:
            return self.cuda_archs
        return tuple(variant_archs(build_toml_cuda_capabilities(), Version(self.toolchain.cuda)))

    def build_args(self) -> list[str]:
        args = ["--backend", self.backend]
        if self.noarch:
            return ["--noarch", *args]
        if self.toolchain.cuda_home_script:
            args += ["--cuda-toolchain", self.toolchain.cuda_home_script]
        if self.toolchain.cross_env_script:
            args += ["--target", self.platform]
        if self.cuda_archs:
            args += ["--cuda-archs", *self.cuda_archs]
        return args


RELEASE = (
    ReleaseVariant("torch-stable-abi211-cpu-x86_64-linux", "cpu", HOST_GCC),
    ReleaseVariant("torch-stable-abi211-cu130-x86_64-linux", "cuda", HOST_NVCC_13),
    # Every CUDA 12.x torch with x >= 4 (cu126, cu128, cu129 for torch 2.11 on), and sm_70.
    ReleaseVariant("torch-stable-abi211-cu124-x86_64-linux", "cuda", DEBIAN_CUDA_12_4),
    # Grace (GH200, GB200), DGX Spark (GB10), Graviton, Ampere Altra: cross-built here.
    ReleaseVariant("torch-stable-abi211-cpu-aarch64-linux", "cpu", AARCH64_CROSS, platform="aarch64"),
    ReleaseVariant("torch-stable-abi211-cu130-aarch64-linux", "cuda", AARCH64_CROSS_NVCC_13, platform="aarch64"),
    # Every torch (2.9, 2.10 included), any CPU: where no compiled variant loads.
    ReleaseVariant("torch-cpu", "cpu", PYTHON_ONLY, platform="any"),
    ReleaseVariant("torch-cuda", "cuda", PYTHON_ONLY, platform="any"),
    # An XPU (Intel GPU) torch: kernels accepts no variant of another backend there, and no
    # SYCL compiler is reachable to build relu-xpu/. Torch ops, exact by construction;
    # untested on an Intel GPU.
    ReleaseVariant("torch-xpu", "xpu", PYTHON_ONLY, platform="any"),
)


def build_toml_cuda_capabilities() -> list[str]:
    with open(ROOT / "build.toml", "rb") as f:
        config = tomllib.load(f)
    return next(k["cuda-capabilities"] for k in config["kernel"].values() if k["backend"] == "cuda")


def variant(name: str) -> ReleaseVariant:
    return next(v for v in RELEASE if v.name == name)


def main() -> None:
    if sys.argv[1:] == ["--table"]:
        print("| variant | backend | CPU | toolchain | CUDA archs |\n|---|---|---|---|---|")
        for v in RELEASE:
            print(f"| `{v.name}` | {v.backend} | {v.platform} | {v.toolchain.description} | "
                  f"{', '.join(v.archs()) or '-'} |")
    elif sys.argv[1:] == ["--other-cuda"]:
        import torch

        for v in RELEASE:
            if v.toolchain.cuda and Version(v.toolchain.cuda).major != Version(torch.version.cuda or "0").major:
                print(v.name, v.toolchain.cuda, v.toolchain.cuda_home_script)
    elif not sys.argv[1:]:
        for v in RELEASE:
            print(v.name, *v.build_args())
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
