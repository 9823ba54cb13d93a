"""The release set: every variant scripts/release.sh stages into relu-build/build/ (what the
Hub's v3 branch holds), in one place. tests/test_variants.py checks what kernels picks from it.

COMPILED: the torch stable-ABI builds (torch >= 2.11). NOARCH: kernel-builder's noarch
variants (scripts/build_variant.py --noarch), which kernels accepts on any torch and ranks
after every accepted compiled variant: they serve only where no compiled one loads."""

COMPILED = (
    "torch-stable-abi211-cpu-x86_64-linux",
    "torch-stable-abi211-cu130-x86_64-linux",
)
NOARCH = (
    "torch-cpu",
    "torch-cuda",
)
VARIANTS = COMPILED + NOARCH
