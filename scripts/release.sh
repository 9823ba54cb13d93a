#!/usr/bin/env bash
# The release build: the torch stable-ABI variants (one binary per backend for every torch
# from 2.11 on), staged with the benchmarks and README into relu-build/ (what the Hub's v3
# branch holds), then the whole suite on exactly those binaries.
#
#   scripts/release.sh            # relu-build/build/torch-stable-abi211-{cpu,cu130}-x86_64-linux,
#                                 # torch-{cpu,cuda} (noarch; tested by scripts/test_noarch.sh)
#
# Built with the newest torch reachable here, 2.14.1 (a CUDA build, from this machine's disk
# or PyPI), in .venv-release; CUDA with the machine's nvcc (13.0: a cu130 variant) for every
# capability build.toml lists. No GPU is needed: the suite then runs both variants on CPU
# tensors; the CUDA tests run where a GPU is (scripts/h200_release.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
RELEASE_TORCH=2.14.1
VENV=.venv-release
if ! "$VENV/bin/python" -c "import torch, kernels, kernel_abi_check, pytest, numpy, ninja; assert torch.__version__.startswith('$RELEASE_TORCH')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q "torch==$RELEASE_TORCH" $(grep -v '^torch==' requirements-dev.txt | grep -v '^#')
fi
# Built apart from the checkout's build/ (which the test command rebuilds for its own torch).
variants=()
for backend in cpu cuda; do
  variants+=("$("$VENV/bin/python" scripts/build_variant.py --backend "$backend" --build-dir .cache/release-build | tail -1)")
  # The noarch variant (Python only): what kernels loads where no compiled one does.
  variants+=("$("$VENV/bin/python" scripts/build_variant.py --noarch --backend "$backend" --build-dir .cache/release-build | tail -1)")
done
"$VENV/bin/python" scripts/stage_release.py relu-build "${variants[@]}"
export HF_HUB_OFFLINE=1
RELU_TEST_PREBUILT=relu-build "$VENV/bin/python" -m pytest tests -q "$@"
