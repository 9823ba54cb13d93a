"""The release set: every variant scripts/release.sh builds and stages, in one place.

    python scripts/release_set.py            # one line per variant: its name, then its build_variant.py arguments

tests/test_variants.py checks what kernels picks from exactly these names.
"""

from __future__ import annotations

from dataclasses import dataclass

# CUDA capabilities of the aarch64 world: 8.0 and 8.9 (PCIe GPUs in Arm servers), 9.0
# (GH200), 10.0 (GB200), 12.0 and 12.1 (GB10, DGX Spark), PTX of the newest for what comes
# after. A cubin serves its own major from its minor up, so 12.0's alone would serve GB10 too;
# 12.1's is there because it is GB10's own.
AARCH64_CUDA_ARCHS = ("8.0", "8.9", "9.0", "10.0", "12.0", "12.1+PTX")


@dataclass(frozen=True)
class ReleaseVariant:
    name: str  # build/<name>, as build_variant.py names it from kernels' types
    backend: str  # build_variant.py --backend
    target: str | None = None  # build_variant.py --target: cross-built for that machine
    cuda_archs: tuple[str, ...] = ()  # build_variant.py --cuda-archs; () for build.toml's

    def build_args(self) -> list[str]:
        args = ["--backend", self.backend]
        if self.target:
            args += ["--target", self.target]
        if self.cuda_archs:
            args += ["--cuda-archs", *self.cuda_archs]
        return args


RELEASE = (
    ReleaseVariant("torch-stable-abi211-cpu-x86_64-linux", "cpu"),
    ReleaseVariant("torch-stable-abi211-cu130-x86_64-linux", "cuda"),
    ReleaseVariant("torch-stable-abi211-cpu-aarch64-linux", "cpu", target="aarch64"),
    ReleaseVariant("torch-stable-abi211-cu130-aarch64-linux", "cuda", target="aarch64",
                   cuda_archs=AARCH64_CUDA_ARCHS),
)


if __name__ == "__main__":
    for variant in RELEASE:
        print(variant.name, *variant.build_args())
