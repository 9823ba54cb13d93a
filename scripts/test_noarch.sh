#!/usr/bin/env bash
# The suite on the noarch variants: stages build/torch-cpu and build/torch-cuda
# (scripts/build_variant.py --noarch) as a release snapshot in $RELU_NOARCH_DIR (default
# .cache/relu-noarch) and runs the tests that load a variant on exactly those
# (RELU_TEST_PREBUILT). kernels picks torch-cpu for CPU tensors and, on a CUDA torch,
# torch-cuda for the CUDA ones. Extra arguments go to pytest; $RELU_NOARCH_TESTS: test files
# instead of the suite. Left out of the suite: the tests of sources and compilers (no variant
# loaded: the default suite runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
dir=${RELU_NOARCH_DIR:-.cache/relu-noarch}
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
             --ignore=tests/test_l2_band_study.py)
fi
RELU_TEST_PREBUILT=$dir exec "$PYTHON" -m pytest "${selection[@]}" "$@"
