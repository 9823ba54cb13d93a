#!/usr/bin/env bash
# The misaligned-pairs study's call on the lent H200 (benchmarks/studies/misaligned.md).
# Builds for sm_90: this checkout (CUDA, CPU), the previous source in .baseline/main and any
# study variant in .baseline/<name>/ (git-ignored source trees; beforehand, on the dev
# machine: `git -C <main> archive HEAD | tar -x -C .baseline/main`, and the revision of this
# checkout in .baseline/REVISION). Then, logs under $OUT (at most 8 files come back):
#   run.log           the CUDA tests that matter, the study's progress, the sweeps' summaries
#   misaligned.json   the study: old beside new (and the variants), every point as it goes
#   sweep_cuda.json   benchmarks/sweep.py --misaligned --quick on the GPU
#   cpu_<isa>.json    benchmarks/sweep.py --misaligned on this host's CPU, per ISA
#
#   OUT=$OUT benchmarks/studies/misaligned_h200.sh [study seconds] [study args...]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/h200/misaligned}
mkdir -p "$OUT"
study_seconds=${1:-110}
shift || true
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 RELU_CUDA_ARCHS=9.0
revision=$(cat .baseline/REVISION 2>/dev/null || echo unknown)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  lscpu | grep -E "Model name|Flags" | sed 's/Flags:.*\(avx512f\).*/Flags: ... avx512f .../'
  echo "revision $revision"; } > "$OUT/device.txt" 2>&1
start=$SECONDS
pids=()
python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0 > "$OUT/build.log" 2>&1 & pids+=($!)
python3 scripts/build_variant.py --backend cpu > /tmp/build_cpu.log 2>&1 & pids+=($!)
for tree in .baseline/*/; do
  (cd "$tree" && python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0) > "/tmp/build_$(basename "$tree").log" 2>&1 & pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
cat /tmp/build_*.log >> "$OUT/build.log"
echo "builds: status $status after $((SECONDS - start)) s" | tee -a "$OUT/build.log"
[ $status -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
variant=$(ls -d build/*-cu1*-x86_64-linux | head -1)
cuobjdump --dump-sass "$variant"/_relu_cuda_*.abi3.so | grep -oE '(LDG|STG|SHFL)[.A-Z0-9_]*' | sort | uniq -c >> "$OUT/device.txt"
builds=()
for tree in .baseline/*/; do
  name=$(basename "$tree")
  dir=$(ls -d "$tree"build/*-cu1*-x86_64-linux | head -1)
  if [ "$name" = main ]; then builds+=(--old "$dir"); else builds+=(--build "$name=$dir"); fi
done
{
  start=$SECONDS
  RELU_TEST_TARGETS=cuda timeout 120 python3 -m pytest -q -x -p no:cacheprovider tests/test_misaligned.py \
    tests/test_cuda.py tests/test_package.py -k "not test_package or kernels_benchmark" 2>&1 | tail -6
  echo "tests: exit ${PIPESTATUS[0]} after $((SECONDS - start)) s"
  python3 benchmarks/studies/misaligned.py --new "$variant" "${builds[@]}" --revision "$revision" \
    --out "$OUT" --time-limit-s "$study_seconds" "$@" 2>&1 | tail -4
  timeout 60 python3 benchmarks/sweep.py --device cuda --misaligned --quick --time-limit-s 30 \
    --out /tmp/sweep_cuda 2>&1 | tail -3
  cp /tmp/sweep_cuda/sweep.json "$OUT/sweep_cuda.json"
  for isa in avx512 avx2; do
    RELU_CPU_ISA=$isa timeout 60 python3 benchmarks/sweep.py --device cpu --misaligned --sizes 1MiB 16MiB \
      --dtypes float32 bfloat16 int8 --repeats 5 --quiet-share 1 --time-limit-s 25 --out /tmp/cpu_$isa 2>&1 | tail -2
    cp /tmp/cpu_$isa/sweep.json "$OUT/cpu_$isa.json"
  done
} > "$OUT/run.log" 2>&1
cat "$OUT/run.log"
