#!/usr/bin/env bash
# Which kernels releases load each variant of a staged snapshot and pass its contract tests:
# what scripts/build_variant.py's KERNELS_MINVER_* (metadata.json's kernels-minver) rest on.
# One venv per kernels release (.cache/kernels-minver/venv-<version>), each over the release
# venv's packages (torch 2.14.1+cu130, pytest: $RELU_MINVER_VENV, default .venv-release) with
# that kernels from PyPI and what it requires installed on top by pip. Logs in
# results/portability/kernels-minver/.
#
#   scripts/kernels_minver.sh SNAPSHOT VERSION...    # e.g. relu-build 0.15.1 0.14.1
#
# Per release, tests/test_contract.py, tests/test_release.py and tests/test_package.py's
# loading tests on:
#   compiled  the snapshot as is: kernels picks the cpu and cu130 variants (CPU tensors);
#   cu124     the same as a CUDA 12.4 torch picks it (tests/kernels_sees_cuda);
#   noarch    its torch-cpu and torch-cuda alone (CPU tensors);
#   xpu       its torch-xpu as an XPU torch picks it (CPU tensors).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
SNAPSHOT=$(cd "$1" && pwd); shift
BASE=${RELU_MINVER_VENV:-.venv-release}
BASE_SITE=$("$BASE/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
CACHE=$PWD/.cache/kernels-minver
RESULTS=${RELU_MINVER_RESULTS:-results/portability/kernels-minver}
mkdir -p "$CACHE" "$RESULTS"

# The noarch variants alone: kernels would otherwise pick the compiled ones.
NOARCH=$CACHE/noarch-snapshot
rm -rf "$NOARCH" && mkdir -p "$NOARCH/build"
cp -a "$SNAPSHOT"/build/torch-cpu "$SNAPSHOT"/build/torch-cuda "$NOARCH/build/"
CUDA12_LIB=$(scripts/toolchains/cuda12.sh)/lib64
# The contract tests, the loading routes of the snapshot (LOCAL_KERNELS, sys.path) and the
# package tests that load through kernels' public API; not those that read metadata with
# kernels 0.17's own parser (kernels._rust), which an older kernels lacks.
TESTS=(tests/test_contract.py tests/test_release.py tests/test_package.py)
SELECT="not benchmark and (not test_package or accepted_by_kernels or public_api or get_local_kernel or sys_path_import)"

for version in "$@"; do
  venv=$CACHE/venv-$version
  if ! "$venv/bin/python" -c "import kernels; assert kernels.__version__ == '$version'" 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' |
      xargs -I{} sh -c "echo '$BASE_SITE' > {}/release-venv.pth"
    "$venv/bin/python" -m pip install -q "kernels==$version" >"$RESULTS/install-$version.log" 2>&1 ||
      { echo "kernels $version: pip install failed (install-$version.log)"; continue; }
  fi
  for pass in compiled cu124 noarch xpu; do
    log=$RESULTS/$version-$pass.log
    env=(HF_HUB_OFFLINE=1 RELU_TEST_PREBUILT=$SNAPSHOT)
    case $pass in
      cu124) env+=(PYTHONPATH=$PWD/tests/kernels_sees_cuda RELU_TEST_KERNELS_CUDA=12.4 LD_LIBRARY_PATH=$CUDA12_LIB) ;;
      noarch) env=(HF_HUB_OFFLINE=1 RELU_TEST_PREBUILT=$NOARCH) ;;
      xpu) env+=(PYTHONPATH=$PWD/tests/kernels_sees_cuda RELU_TEST_KERNELS_XPU=2026.1) ;;
    esac
    select=(-k "$SELECT")
    [ "$pass" = xpu ] && select=(-k "xpu-variant-on-cpu and $SELECT")
    echo "# kernels $version, $pass: ${env[*]} pytest ${TESTS[*]} ${select[*]}" >"$log"
    status=0
    env "${env[@]}" "$venv/bin/python" -m pytest -q -p no:cacheprovider "${TESTS[@]}" "${select[@]}" >>"$log" 2>&1 || status=$?
    echo "exit $status" >>"$log"
    # Without the suite's harness (whose conftest needs kernels >= 0.15's variant API): what
    # get_kernel loads for this machine's default backend, and one relu through it.
    probe=$(cd / && env "${env[@]}" LOCAL_KERNELS="relu-dev/relu=${env[1]#RELU_TEST_PREBUILT=}" "$venv/bin/python" -c '
import pathlib, torch
from kernels import get_kernel
relu = get_kernel("relu-dev/relu", version=3)
y = relu.relu(torch.tensor([-1.0, float("nan"), -0.0, 2.0]))
assert y.tolist() == [0.0, 0.0, 0.0, 2.0] and not torch.signbit(y).any(), y
print("probe: get_kernel loaded", pathlib.Path(relu.__file__).parent.name, "and relu was right")' 2>&1 | tail -1)
    echo "$probe" >>"$log"
    echo "kernels $version, $pass: exit $status, $(grep -E '[0-9]+ (passed|failed|error)' "$log" | tail -1); $probe"
  done
done
