#!/usr/bin/env bash
# The suite on the noarch variants: stages build/torch-cpu and build/torch-cuda
# (scripts/build_variant.py --noarch) as a release snapshot in $RELU_NOARCH_DIR (default
# .cache/relu-noarch) and runs the tests that load a variant on exactly those
# (RELU_TEST_PREBUILT). kernels picks torch-cpu for CPU tensors and, on a CUDA torch,
# torch-cuda for the CUDA ones. Extra arguments go to pytest; $RELU_NOARCH_TESTS: test files
# instead of the suite. Left out of the suite: the tests of sources and compilers (no variant
# loaded: the default suite runs them).
#
# RELU_NOARCH_TORCH=<version> (e.g. 2.9.1, the oldest torch the noarch variants serve) runs it
# under that torch instead: a venv at $RELU_NOARCH_VENV (default .cache/venv-torch<version>),
# made on first use with torch==<version> from PyPI (its CUDA wheel: it imports without a GPU,
# tests the torch-cuda variant on CPU tensors too, and pulls the Triton that torch pins) and
# the rest of requirements-dev.txt; kept for the next run. 2.9.1: about 3.9 GB of wheels
# (torch 0.9 GB, the CUDA 12.8 libraries 2.9 GB, triton 3.5.1), a 7 GB venv.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
if [ -n "${RELU_NOARCH_TORCH:-}" ]; then
  venv=${RELU_NOARCH_VENV:-.cache/venv-torch$RELU_NOARCH_TORCH}
  if ! "$venv/bin/python" -c "import torch, kernels, pytest, numpy, triton, tabulate
assert torch.__version__.split('+')[0] == '$RELU_NOARCH_TORCH'" 2>/dev/null; then
    python3 -m venv "$venv"
    scripts/pip_install.sh "$venv/bin/python" --upgrade pip
    # torch's own pins decide triton and the CUDA libraries; the rest as the test venv has it.
    scripts/pip_install.sh "$venv/bin/python" "torch==$RELU_NOARCH_TORCH" \
      $(grep -v -E '^(#|torch==|triton==)' requirements-dev.txt | grep .)
  fi
  PYTHON=$(cd "$venv" && pwd)/bin/python
  dir=${RELU_NOARCH_DIR:-.cache/relu-noarch-torch$RELU_NOARCH_TORCH}
fi
dir=${dir:-${RELU_NOARCH_DIR:-.cache/relu-noarch}}
for backend in cpu cuda; do
  "$PYTHON" scripts/build_variant.py --noarch --backend $backend --build-dir .cache/noarch/build >/dev/null
done
# stage() itself, not the release command: these two are not the whole release set.
(cd scripts && "$PYTHON" -c 'import sys; from pathlib import Path; from stage_release import stage
stage(Path(sys.argv[1]).resolve(), [Path(p).resolve() for p in sys.argv[2:]])' \
  "../$dir" ../.cache/noarch/build/torch-cpu ../.cache/noarch/build/torch-cuda)
if [ -n "${RELU_NOARCH_TESTS:-}" ]; then
  selection=($RELU_NOARCH_TESTS)
else
  selection=(tests --ignore=tests/test_relu_element.py --ignore=tests/test_strided_index.py
             --ignore=tests/test_xpu_source.py --ignore=tests/test_arm_compile.py
             --ignore=tests/test_cuda_compile.py --ignore=tests/test_triton_interpret.py
             --ignore=tests/test_launch_policy.py --ignore=tests/test_architecture.py
             --ignore=tests/test_l2_band_study.py --ignore=tests/test_cpu_clang.py
             --ignore=tests/test_build_lists.py)
fi
RELU_TEST_PREBUILT=$dir exec "$PYTHON" -m pytest "${selection[@]}" "$@"
