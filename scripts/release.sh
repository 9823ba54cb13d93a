#!/usr/bin/env bash
# The release build: every variant of the release set (scripts/release_set.py: the torch
# stable-ABI cpu, cu130 and cu124 variants for x86_64, cpu and cu130 for aarch64, one binary
# each for every torch from 2.11 on, and the noarch torch-cpu and torch-cuda, Python only, for
# every other torch and CPU, and torch-xpu for an XPU torch), staged with the benchmarks and
# the card into relu-build/ (what the Hub's v3 branch holds; the card, build/CARD.md, is what
# kernel-builder's upload puts on main), then the whole suite on exactly those binaries.
#
#   scripts/release.sh            # relu-build/build/<each variant of the release set>
#
# Built with the newest torch reachable here, 2.14.1 (a CUDA 13.0 build, from this machine's
# disk or PyPI), in .venv-release, made from requirements-release.txt; each variant with the
# toolchain its row names (the cu124
# one fetches and caches CUDA 12.4 itself: scripts/toolchains/cuda12.sh), CUDA archs by
# kernel-builder's rule. No GPU is needed: the suite runs the variants kernels picks here
# (cpu, cu130) on CPU tensors, then a second pass the variants of another CUDA major (cu124)
# as a CUDA 12 torch would pick them (tests/kernels_sees_cuda); the CUDA tests run where a GPU
# is (scripts/h200_release.sh, stages cu12 and ptx70); a third pass runs the torch-xpu
# variant as an XPU torch's kernels picks it, on CPU tensors (no Intel GPU here).
# The aarch64 variants are cross-built with scripts/toolchains/aarch64.sh (fetched on first
# use: Debian's aarch64 g++, aarch64 torch 2.13.0 from PyPI, whose headers and libraries they
# are built against); scripts/test_aarch64.sh relu-build runs them under emulation.
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE_TORCH=$(sed -n 's/^torch==//p' requirements-release.txt)
VENV=.venv-release
# Made again when requirements-release.txt changed since (a copy of it in the venv says so).
if ! cmp -s requirements-release.txt "$VENV/requirements-release.txt" ||
   ! "$VENV/bin/python" -c "import torch; assert torch.__version__.startswith('$RELEASE_TORCH')" 2>/dev/null; then
  python3 -m venv "$VENV"
  scripts/pip_install.sh "$VENV/bin/python" --upgrade pip
  scripts/pip_install.sh "$VENV/bin/python" -r requirements-release.txt
  cp requirements-release.txt "$VENV/requirements-release.txt"
fi
source "$(scripts/toolchains/aarch64.sh)"
# Built apart from the checkout's build/ (which the test command rebuilds for its own torch).
variants=()
while read -r name args; do
  built=$("$VENV/bin/python" scripts/build_variant.py $args --build-dir .cache/release-build | tail -1)
  [ "$(basename "$built")" = "$name" ] || { echo "release.sh: built $built, the release set says $name" >&2; exit 1; }
  variants+=("$built")
done < <("$VENV/bin/python" scripts/release_set.py)
"$VENV/bin/python" scripts/stage_release.py relu-build "${variants[@]}"
export HF_HUB_OFFLINE=1
RELU_TEST_PREBUILT=relu-build "$VENV/bin/python" -m pytest tests -q "$@"
# No torch >= 2.11 for CUDA 12 is reachable: the cu12x variants load here under the CUDA 13
# torch, beside their own libcudart.so.12, with kernels told that torch's CUDA is theirs.
while read -r name cuda toolchain; do
  echo "release.sh: $name as a CUDA $cuda torch picks it"
  PYTHONPATH=$PWD/tests/kernels_sees_cuda RELU_TEST_KERNELS_CUDA=$cuda LD_LIBRARY_PATH="$("$toolchain")/lib64" \
    RELU_TEST_PREBUILT=relu-build "$VENV/bin/python" -m pytest tests/test_package.py tests/test_cuda_archs.py \
    tests/test_release.py -q "$@"
done < <("$VENV/bin/python" scripts/release_set.py --other-cuda)
# No XPU torch is reachable either: torch-xpu loads as kernels picks it on an XPU torch
# (tests/kernels_sees_cuda, RELU_TEST_KERNELS_XPU), its ops on CPU tensors.
echo "release.sh: torch-xpu as an XPU torch picks it"
PYTHONPATH=$PWD/tests/kernels_sees_cuda RELU_TEST_KERNELS_XPU=2026.1 RELU_TEST_PREBUILT=relu-build \
  "$VENV/bin/python" -m pytest tests -q -k "xpu-variant-on-cpu" "$@"
