#!/usr/bin/env bash
# The aarch64 variants under emulation, in one command: cross-builds both (or takes a staged
# snapshot that holds them), runs the suite's variant tests on them under qemu-aarch64 with
# aarch64 torch 2.13.0 (the cu130 variant on CPU tensors: no GPU is emulated, its GPU code
# never runs here), checks that the loops that ran are NEON loops, then the sabotage check: a
# copy of the tree whose NEON loop is wrong must fail the same tests. Logs in results/aarch64/.
#
#   scripts/test_aarch64.sh [SNAPSHOT]    # SNAPSHOT: e.g. relu-build/ from scripts/release.sh
#
# Emulation says nothing about speed. The toolchain (scripts/toolchains/aarch64.sh) is
# fetched on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh  # the host Python that builds (kernels' types and digest)
source "$(scripts/toolchains/aarch64.sh)"
RESULTS=${RELU_AARCH64_RESULTS:-results/aarch64}
mkdir -p "$RESULTS"

# The suite's tests of a loaded variant, as far as emulation runs them in reasonable time on
# this 2-core machine (import torch alone takes 20 s to 2 min under qemu here, each test
# subprocess pays it again). Left out, and why:
#  - test_views (about 2000 cases over both variants: hours under emulation); the stepped
#    rows and permuted slices that its walks take are in test_cpu_isa's check, for every dtype;
#  - "compile" cases (-k): Inductor compiles C++ for the host it runs on, and the only g++ an
#    emulated process can start is this machine's x86_64 one; test_compile for the same reason;
#  - test_cuda (no GPU is emulated);
#  - the host-compiled checkers and source checks (test_relu_element, test_strided_index,
#    test_xpu_source, test_cuda_compile, test_arm_compile), which build x86_64 programs and
#    would test those (test_arm_compile reads the aarch64 binaries below, natively).
TESTS=(tests/test_contract.py tests/test_new_dtypes.py tests/test_autograd.py tests/test_cpu_isa.py
       tests/test_package.py tests/test_cuda_archs.py tests/test_release.py tests/test_kernelize.py
       tests/test_variants.py)
SELECT=(-k "not compile")

stage_some() {  # stage_some <snapshot> <variant dir>...: stage_release's layout for some variants
  # (its command refuses anything but the whole release set)
  "$PYTHON" -c 'import sys; from pathlib import Path; sys.path.insert(0, "scripts"); from stage_release import stage
stage(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])' "$@"
}

build_aarch64() {  # build_aarch64 <snapshot>: both aarch64 variants of the release set, staged
  local snapshot=$1 variants=() name args
  while read -r name args; do
    [[ $name == *-aarch64-linux ]] || continue
    # shellcheck disable=SC2086
    variants+=("$("$PYTHON" scripts/build_variant.py $args --build-dir .cache/aarch64-build | tail -1)")
  done < <("$PYTHON" scripts/release_set.py)
  stage_some "$snapshot" "${variants[@]}"
}

emulated_pytest() {  # emulated_pytest <snapshot> <log> pytest-args...
  local snapshot=$1 log=$2; shift 2
  { echo "# $(date -u +%FT%TZ) qemu-aarch64 -cpu max, $("$AARCH64_QEMU" --version | head -1)"
    echo "# variants: $(ls "$snapshot/build" | tr '\n' ' ')"
    echo "# RELU_TEST_PREBUILT=$snapshot $AARCH64_PYTHON -m pytest $*"; } >"$log"
  RELU_TEST_PREBUILT=$snapshot "$AARCH64_PYTHON" -m pytest -p no:cacheprovider "$@" >>"$log" 2>&1
}

SNAPSHOT=${1:-}
if [ -z "$SNAPSHOT" ]; then
  SNAPSHOT=.cache/aarch64-snapshot
  build_aarch64 "$SNAPSHOT"
fi
SNAPSHOT=$(cd "$SNAPSHOT" && pwd)

# What ran: the machine, torch and variant kernels picked for each backend, and the CPU
# loop it selected (on aarch64 "portable": the baseline loop, NEON, see the check below).
RELU_TEST_PREBUILT=$SNAPSHOT "$AARCH64_PYTHON" - >"$RESULTS/isa.txt" 2>&1 <<'EOF'
import os, platform, torch
from kernels import get_local_kernel
from pathlib import Path
print(f"machine {platform.machine()}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
      f"GPU available: {torch.cuda.is_available()}")
for backend in ("cpu", "cuda"):
    kernel = get_local_kernel(Path(os.environ["RELU_TEST_PREBUILT"]), backend=backend)
    print(f"{backend}: {Path(kernel.__file__).parent.name}, CPU loop {kernel._ops.ops.cpu_isa()}")
EOF
cat "$RESULTS/isa.txt"
# The shipped binaries' portable loops hold NEON loads, stores and vector operations.
for so in "$SNAPSHOT"/build/*-aarch64-linux/*.abi3.so; do
  echo "# RELU_ARM_BINARY=${so#"$SNAPSHOT"/} pytest tests/test_arm_compile.py"
  RELU_ARM_BINARY=$so "$PYTHON" -m pytest -q -p no:cacheprovider tests/test_arm_compile.py
done >"$RESULTS/neon.log" 2>&1
tail -1 "$RESULTS/neon.log"

status=0
emulated_pytest "$SNAPSHOT" "$RESULTS/tests.log" -q -rs --durations=15 "${SELECT[@]}" "${TESTS[@]}" || status=$?
echo "exit $status" >>"$RESULTS/tests.log"
tail -2 "$RESULTS/tests.log"

# Sabotage: in a copy of the tree, forward_portable (the NEON loop on aarch64) copies its
# input instead of taking its ReLU. The CPU variant built from it, staged beside the good
# cu130 one (whose CPU code is the same source), must fail the tests of that variant.
# The copy lives in .cache/ (git-ignored), where its objects are kept for the next run.
SABOTAGE=$PWD/.cache/aarch64-sabotage
mkdir -p "$SABOTAGE"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$SABOTAGE"
"$PYTHON" - "$SABOTAGE/relu-cpu/relu_cpu.cpp" <<'EOF'
import re, sys
path = sys.argv[1]
source = open(path).read()
patched, count = re.subn(r"(void forward_portable\([^{]*\{\n)  forward_span<Fmt>\(in, out, n\);",
                         r"\1  for (int64_t i = 0; i < n; ++i) out[i] = in[i];  // sabotage", source)
assert count == 1, "forward_portable not found: the sabotage patch needs updating"
open(path, "w").write(patched)
EOF
broken=$("$PYTHON" "$SABOTAGE/scripts/build_variant.py" --target aarch64 --backend cpu \
         --build-dir "$SABOTAGE/.cache/aarch64-build" | tail -1)
stage_some "$SABOTAGE/snapshot" "$broken" "$SNAPSHOT/build/torch-stable-abi211-cu130-aarch64-linux"
sabotage_status=0
emulated_pytest "$SABOTAGE/snapshot" "$RESULTS/sabotage.log" -q -x -k "not cuda-variant-on-cpu" \
  tests/test_contract.py tests/test_cpu_isa.py || sabotage_status=$?
echo "exit $sabotage_status" >>"$RESULTS/sabotage.log"
tail -2 "$RESULTS/sabotage.log"
if [ "$sabotage_status" -ne 1 ]; then
  echo "sabotage check: expected test failures (exit 1), got exit $sabotage_status" >&2
  status=1
fi

# What the tests ran on and were built with.
{ "$AARCH64_QEMU" --version | head -1
  echo "sysroot: $(ls "$AARCH64_SYSROOT"/usr/bin/python3.* | head -1 | xargs basename) from Debian bookworm arm64"
  "$AARCH64_CXX" --version | head -1
  "$AARCH64_CUDA_TOP/bin/nvcc" --version | tail -2 | head -1
  echo "aarch64 Python packages (pip --target):"
  ls "$AARCH64_TORCH_SITE" | sed -n 's/^\(.*\)\.dist-info$/  \1/p'
  echo "libcupti.so.13: stand-in (test scaffolding)"; } >"$RESULTS/toolchain.txt"
exit "$status"
