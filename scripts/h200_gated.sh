#!/usr/bin/env bash
# The gated ops (relu_and_mul, relu_squared_and_mul) on the lent H200 in one device call (about 9
# minutes; --quick about 3): the CUDA variant, tests/test_gated.py on it, kernels-community/
# activation's fatrelu_and_mul built as a peer, benchmarks/gated.py; every result in ONE folder,
# results/h200/gated-<revision>/, packed into one tarball under $OUT beside summary.md (the device
# returns at most 8 files).
#
#   RELU_GIT_REVISION=<commit> scripts/h200_gated.sh            # on the H200; carry .whl (and build)
#   RELU_GIT_REVISION=<commit> scripts/h200_gated.sh --quick    # every stage at smoke size
#   scripts/h200_gated.sh --standin   # no build, no tests: the harness on the torch stand-ins
#
# .whl: the wheels kernels needs there (../shared/device/fetch-wheels .whl), installed to .site
# (../shared/H200.md). A CUDA variant built on the dev machine, carried as
# build/torch-stable-abi211-cu130-x86_64-linux, is tested and timed as it is (RELU_TEST_PREBUILT:
# nothing of it rebuilt); without it the CUDA variant is built here for sm_90. The CPU variant,
# which the tests' session start loads, is built here unless carried too.
# PYTHON (default python3); RELU_DEVICE=cpu runs the same stages on the CPU (a smoke test of this
# script: RELU_DEVICE=cpu PYTHON=.venv/bin/python scripts/h200_gated.sh --quick).
# RELU_BUDGET_S (default 530): the seconds all stages may take together; each stage's box is cut
# to what is left, and a stage with less than 20 s left is skipped and says so. Stages in order:
#   build    the CUDA variant for sm_90 unless carried; meanwhile the CPU variant unless carried,
#            and the activation peer (benchmarks/peers/activation_build.py, about 30 s)
#   tests    pytest tests/test_gated.py, RELU_TEST_TARGETS=cuda
#   gated    benchmarks/gated.py: the bit-for-bit check against kernels-community, then bfloat16
#            forward (64 KiB-1 GiB and an MLP shape) and forward + backward, then float32; it
#            starts no new point 45 s before its box ends, and keeps what it measured
set -uo pipefail
cd "$(dirname "$0")/.."
quick=() standin=()
for arg in "$@"; do
  case $arg in
    --quick) quick=(--quick) ;;
    --standin) standin=(--standin) ;;
    *) echo "unknown argument $arg"; exit 2 ;;
  esac
done
budget=${RELU_BUDGET_S:-530}
device=${RELU_DEVICE:-cuda}
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 RELU_CUDA_ARCHS=${RELU_CUDA_ARCHS-9.0}
if ls .whl/*.whl >/dev/null 2>&1; then
  "$PYTHON" -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
  export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
elif ! "$PYTHON" -c 'import kernels' 2>/dev/null; then
  echo "no kernels here and no .whl/ to install it from: ../shared/device/fetch-wheels .whl, and carry .whl"
  exit 1
fi
revision=${RELU_GIT_REVISION:-$(git describe --always --dirty 2>/dev/null || echo unknown)}
export RELU_GIT_REVISION=$revision  # the results' meta: the device's copy has no .git
name=gated-$revision${quick:+-quick}${standin:+-standin}
dir=results/$([ "$device" = cuda ] && echo h200 || echo cpu)/$name
mkdir -p "$dir"
OUT=${OUT:-$dir/out}
mkdir -p "$OUT"

suffix=$([ "$device" = cuda ] && echo cu || echo cpu)
carried=$(ls -d build/torch-stable-abi211-cu130-x86_64-linux 2>/dev/null)
[ "$device" = cuda ] || carried=""
what="the build of this checkout"
[ -n "$carried" ] && what="the carried build $carried"
[ ${#standin[@]} -gt 0 ] && what="the torch stand-in"
{ echo "revision $revision; device $device; measured: $what"
  [ -n "$carried" ] && "$PYTHON" -c 'import json, sys; m = json.load(open(sys.argv[1]))
print("carried variant metadata:", {k: v for k, v in m.items() if k != "digest"})' "$carried/metadata.json"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null
  "$PYTHON" -c 'import platform, torch, kernels, triton
print("python", platform.python_version(), "torch", torch.__version__, "triton", triton.__version__,
      "kernels", kernels.__version__)'
  command -v nvcc >/dev/null && nvcc --version | tail -2
  grep -m1 "model name" /proc/cpuinfo; echo "CPUs $(nproc)"
} > "$dir/device.txt" 2>&1
cat "$dir/device.txt"

start=$SECONDS
status=()
stage() {  # <name> <seconds> <command...>: run it time-boxed, output in <dir>/run.log
  local name=$1 box=$2 left=$((budget - (SECONDS - start)))
  shift 2
  if [ "$left" -lt 20 ]; then status+=("$name: skipped (budget spent)"); return 1; fi
  [ "$box" -gt "$left" ] && box=$left
  echo "== $name at $((SECONDS - start)) s (box $box s): $*" >> "$dir/run.log"
  local begin=$SECONDS rc
  timeout "$box" "$@" >> "$dir/run.log" 2>&1
  rc=$?
  status+=("$name: exit $rc in $((SECONDS - begin)) s$([ $rc -eq 124 ] && echo " (time box)")")
  return $rc
}
background() {  # <log> <seconds> <command...>: started now, time-boxed, its exit status in <log>.rc
  local log=$1 box=$2
  shift 2
  ( timeout "$box" "$@" > "$log" 2>&1; echo $? > "$log.rc" ) &
}
finish() {  # the summary, and everything packed for the trip back
  printf '%s\n' "${status[@]}" > "$dir/stages.txt"
  rm -f "$dir"/*.rc
  { echo "# relu_and_mul / relu_squared_and_mul on the H200, $name"; echo; cat "$dir/device.txt"; echo
    cat "$dir/stages.txt"; echo
    grep -E "passed|failed|error" "$dir/run.log" 2>/dev/null | grep -E "^[0-9=]|^FAILED|^ERROR" | tail -20
    [ -f "$dir/activation_build.log" ] && { echo; echo "activation peer build:"; tail -3 "$dir/activation_build.log"; }
    [ -f "$dir/gated.md" ] && { echo; cat "$dir/gated.md"; }
  } > "$dir/summary.md" 2>&1
  cp "$dir/summary.md" "$OUT/summary.md"
  tar -czf "$OUT/$name.tar.gz" --exclude "$name/out" -C "$(dirname "$dir")" "$name"
  echo "packed: $OUT/$name.tar.gz; unpack with tar -xzf into $(dirname "$dir")/"
  cat "$dir/summary.md"
}
kernel=()
if [ "$device" = cuda ]; then  # the peer builds beside ours: nvcc on the host's cores
  background "$dir/activation_build.log" 150 "$PYTHON" benchmarks/peers/activation_build.py
fi
if [ ${#standin[@]} -eq 0 ]; then
  if [ "$device" = cpu ] || ! ls -d build/torch-stable-abi211-cpu-x86_64-linux >/dev/null 2>&1; then
    background "$dir/build_cpu.log" 300 "$PYTHON" scripts/build_variant.py --backend cpu
  fi
  built=0
  if [ "$device" = cuda ] && [ -z "$carried" ]; then
    stage build 200 "$PYTHON" scripts/build_variant.py --backend cuda --cuda-archs $RELU_CUDA_ARCHS
    built=$?
  fi
  wait
  [ -f "$dir/build_cpu.log.rc" ] && status+=("build cpu: exit $(cat "$dir/build_cpu.log.rc")")
  variant=${carried:-$(ls -d build/*-$suffix*-x86_64-linux 2>/dev/null | head -1)}
  if [ $built -ne 0 ] || [ -z "$variant" ]; then
    tail -40 "$dir/run.log" "$dir/build_cpu.log" 2>/dev/null
    status+=("the $device build failed: see run.log (--standin runs the harness without it)")
    finish
    exit 1
  fi
  kernel=(--kernel "$variant")
  # A carried variant is tested as it is: the tests load what build/ holds, building nothing.
  [ -n "$carried" ] && export RELU_TEST_PREBUILT=$PWD
  RELU_TEST_TARGETS=$device stage tests 90 "$PYTHON" -m pytest tests/test_gated.py tests/test_relu_squared.py \
    tests/test_kernelize.py -q -rs -p no:cacheprovider -k "not test_kernelized_function and not test_deprecated"
else
  wait
fi
if [ ${#quick[@]} -gt 0 ]; then
  bench=(--quick)
else
  left=$((budget - (SECONDS - start) - 10))  # 10 s for the summary and the tarball
  bench=(--repeats 5 --time-limit-s $((left > 90 ? left - 45 : 45)))
fi
if [ -f "$dir/activation_build.log.rc" ]; then
  status+=("activation peer build: exit $(cat "$dir/activation_build.log.rc")")
  # Its build failed or ran out of time: not again inside the benchmark's box (the log says why).
  [ "$(cat "$dir/activation_build.log.rc")" = 0 ] || bench+=(--no-activation)
fi
[ "$device" = cpu ] && bench+=(--quiet-share 1 --min-sample-ms 5)
stage gated $((budget - (SECONDS - start) - 10)) "$PYTHON" benchmarks/gated.py --device "$device" "${kernel[@]}" \
  "${standin[@]}" "${bench[@]}" --out "$dir"
finish
