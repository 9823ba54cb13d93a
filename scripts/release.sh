#!/usr/bin/env bash
# The release build: the torch stable-ABI variants of scripts/release_set.py (one binary per
# backend and machine for every torch from 2.11 on), staged with the benchmarks and README
# into relu-build/ (what the Hub's v3 branch holds), then the whole suite on exactly those
# binaries.
#
#   scripts/release.sh            # relu-build/build/torch-stable-abi211-{cpu,cu130}-{x86_64,aarch64}-linux
#
# Built with the newest torch reachable here, 2.14.1 (a CUDA build, from this machine's disk
# or PyPI), in .venv-release; CUDA with the machine's nvcc (13.0: a cu130 variant) for every
# capability build.toml lists. No GPU is needed: the suite then runs both variants on CPU
# tensors; the CUDA tests run where a GPU is (scripts/h200_release.sh).
# The aarch64 variants are cross-built with scripts/toolchains/aarch64.sh (fetched on first
# use: Debian's aarch64 g++, aarch64 torch 2.13.0 from PyPI, whose headers and libraries they
# are built against); scripts/test_aarch64.sh relu-build runs them under emulation.
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE_TORCH=2.14.1
VENV=.venv-release
if ! "$VENV/bin/python" -c "import torch, kernels, kernel_abi_check, pytest, numpy, ninja; assert torch.__version__.startswith('$RELEASE_TORCH')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "torch==$RELEASE_TORCH" $(grep -v '^torch==' requirements-dev.txt | grep -v '^#')
fi
source "$(scripts/toolchains/aarch64.sh)"
# Built apart from the checkout's build/ (which the test command rebuilds for its own torch).
variants=()
while read -r name args; do
  # shellcheck disable=SC2086
  variants+=("$("$VENV/bin/python" scripts/build_variant.py $args --build-dir .cache/release-build | tail -1)")
  [ "$(basename "${variants[-1]}")" = "$name" ] || { echo "built ${variants[-1]}, release_set.py says $name" >&2; exit 1; }
done < <("$VENV/bin/python" scripts/release_set.py)
"$VENV/bin/python" scripts/stage_release.py relu-build "${variants[@]}"
export HF_HUB_OFFLINE=1
RELU_TEST_PREBUILT=relu-build "$VENV/bin/python" -m pytest tests -q "$@"
