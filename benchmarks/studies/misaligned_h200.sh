#!/usr/bin/env bash
# The misaligned-pairs study's one call on the lent H200 (benchmarks/studies/misaligned.md):
# builds this checkout's CUDA and CPU variants and the noarch torch-cuda variant, and the
# previous source in .baseline/main (git-ignored; `git -C <main> archive HEAD | tar -x -C
# .baseline/main` beforehand) for sm_90, then the study (old beside new, every point's JSON
# written as it goes), then the CUDA tests that matter. Logs and JSON under $OUT.
#
#   OUT=$OUT benchmarks/studies/misaligned_h200.sh [study seconds, default 200] [test -k expr]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/h200/misaligned}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 RELU_CUDA_ARCHS=9.0
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  git log --oneline -1 2>/dev/null; } > "$OUT/device.txt" 2>&1
start=$SECONDS
python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0 > "$OUT/build.log" 2>&1 & new=$!
python3 scripts/build_variant.py --backend cpu > /tmp/build_cpu.log 2>&1 & cpu=$!
python3 scripts/build_variant.py --noarch --backend cuda > /tmp/build_noarch.log 2>&1 & noarch=$!
(cd .baseline/main && python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0) > /tmp/build_old.log 2>&1 & old=$!
wait $new; s_new=$?; wait $old; s_old=$?; wait $noarch; s_noarch=$?
cat /tmp/build_old.log /tmp/build_noarch.log >> "$OUT/build.log"
echo "builds: new=$s_new old=$s_old noarch=$s_noarch after $((SECONDS - start)) s" | tee -a "$OUT/build.log"
[ $s_new -eq 0 ] && [ $s_old -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
variant=$(ls -d build/*-cu1*-x86_64-linux | head -1)
old_variant=$(ls -d .baseline/main/build/*-cu1*-x86_64-linux | head -1)
noarch_args=()
[ $s_noarch -eq 0 ] && noarch_args=(--noarch build/torch-cuda)
cuobjdump --dump-sass "$variant"/_relu_cuda_*.abi3.so | grep -oE '(LDG|STG)[.A-Z0-9_]*' | sort | uniq -c >> "$OUT/device.txt"
python3 benchmarks/studies/misaligned.py --new "$variant" --old "$old_variant" "${noarch_args[@]}" \
  --out "$OUT" --time-limit-s "${1:-200}" > "$OUT/study.log" 2>&1
tail -5 "$OUT/study.log"
wait $cpu; echo "cpu build: $?" >> "$OUT/build.log"
start=$SECONDS
RELU_TEST_TARGETS=cuda timeout 170 python3 -m pytest -q -x -p no:cacheprovider tests/test_misaligned.py tests/test_cuda.py \
  ${2:+-k "$2"} > "$OUT/tests.log" 2>&1
echo "tests: exit $? after $((SECONDS - start)) s" | tee -a "$OUT/tests.log"
tail -5 "$OUT/tests.log"
