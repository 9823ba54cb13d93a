#!/usr/bin/env bash
# Everything the CUDA backend needs from one call on the lent H200 (device tool), logs under
# $OUT (default results/h200/run; at most 8 files come back from the device, so few):
#
#   scripts/h200.sh [tests] [bench]     (no argument: tests)
#
# Before the call, on the dev machine: `../shared/device/fetch-wheels .whl` (kernels and
# tomlkit as wheels), and name `.whl` in the call's carry. Here: the wheels go to .site
# (../shared/H200.md), both variants are built with the project's own command
# (scripts/build_variant.py; RELU_CUDA_ARCHS, default 9.0, limits the CUDA archs) -> build.log,
# device and software                                                   -> device.txt, then
#   tests   the whole suite, CUDA tests included (scripts/test.sh)      -> tests.log
#           (a crashing test: its native stack                           -> crash_backtrace.txt)
#           and the SASS of the built kernels' global loads/stores       -> device.txt
#   bench   kernels benchmark on this checkout                          -> bench.log
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/h200/run}
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(tests)
wants() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
export RELU_CUDA_ARCHS=${RELU_CUDA_ARCHS-9.0}
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch, kernels; print("torch", torch.__version__, "kernels", kernels.__version__, "gpus", torch.cuda.device_count())'
  echo "host compiler: $(command -v c++) $(c++ --version | head -1)"
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

start=$SECONDS
python3 scripts/build_variant.py --backend cpu > /tmp/build_cpu.log 2>&1 &
cpu_build=$!
python3 scripts/build_variant.py --backend cuda --cuda-archs $RELU_CUDA_ARCHS > "$OUT/build.log" 2>&1
cuda_status=$?
wait $cpu_build; cpu_status=$?
cat /tmp/build_cpu.log >> "$OUT/build.log"
echo "builds: cuda=$cuda_status cpu=$cpu_status after $((SECONDS - start)) s" | tee -a "$OUT/build.log"
[ $cuda_status -eq 0 ] || { cat "$OUT/build.log"; exit 1; }

status=0
if wants tests; then
  # Which global loads and stores the built kernels use (LDG.E.128 / STG.E.128 expected).
  echo "libstdc++ stream code compiled into the CPU variant (expected: none):" >> "$OUT/device.txt"
  nm -C --defined-only build/*-cpu-*/_relu_cpu_*.abi3.so | grep -cE "basic_ostream|num_put" >> "$OUT/device.txt"
  echo "global loads/stores in the built kernels' SASS (count, instruction):" >> "$OUT/device.txt"
  for so in build/*-cu*/_relu_cuda_*.abi3.so; do
    cuobjdump --dump-sass "$so" | grep -oE '(LDG|STG)[.A-Z0-9_]*' | sort | uniq -c
  done >> "$OUT/device.txt" 2>&1
  cat "$OUT/device.txt"
  start=$SECONDS
  # One pytest-xdist worker: a test that crashes the interpreter is reported as failed and
  # the rest still runs (xdist is in the H200 image; CI runs plain pytest).
  scripts/test.sh -q -rs -n 1 --max-worker-restart=20 2>&1 | tee "$OUT/tests.log"
  status=${PIPESTATUS[0]}
  echo "tests: exit $status after $((SECONDS - start)) s" | tee -a "$OUT/tests.log"
  # For the first crashed test, the native stack (cuda-gdb debugs host code too; no gdb here).
  crashed=$(grep -oE "crashed while running '[^']+'" "$OUT/tests.log" | head -1 | cut -d"'" -f2)
  if [ -n "$crashed" ]; then
    echo "native backtrace of $crashed" > "$OUT/crash_backtrace.txt"
    timeout 180 cuda-gdb -q -batch -ex run -ex "bt 60" \
      --args python3 -m pytest -q -p no:cacheprovider "$crashed" 2>&1 | grep -vE "^\[(New|Thread|Detaching)" \
      | tail -150 >> "$OUT/crash_backtrace.txt"
  fi
fi
if wants bench; then
  python3 scripts/kernels_cli_offline.py benchmark . 2>&1 | tee "$OUT/bench.log"
fi
exit $status
