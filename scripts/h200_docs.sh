#!/usr/bin/env bash
# Every user-facing GPU figure of the docs, measured on the shipped build in one device call of
# the lent H200 (about 7 minutes): the binaries of relu-build/ (scripts/release.sh's staged
# snapshot), unchanged, into ONE folder of the build's, results/<commit>/h200/, then
# packed into one tarball under $OUT (the device returns at most 8 files), a summary printed last.
#
#   scripts/h200_docs.sh                  # on the H200; carry relu-build and .whl
#   scripts/h200_docs.sh --quick          # every stage at smoke size (also: --device cpu, here)
#
# Before the call, on the dev machine: scripts/release.sh; ../shared/device/fetch-wheels .whl
# (kernels for the H200's python3). The build commit is read from the staged metadata.json
# (provenance), else RELU_GIT_REVISION. RELU_BUILD: another snapshot; RELU_BUDGET_S (default
# 510): the seconds all stages may take together, so that the tarball is written within the
# device's 10 minutes (each stage's box is cut to what is left; a stage with less than 15 s left
# is skipped and says so). Stages, by priority, each under its own time box:
#   dense     relu(x) vs torch.relu(x), out= vs copy_/clamp_min(out=), cold and hot, 4 KiB-1 GiB,
#             float32/float16/bfloat16/int8; at the key sizes the backward (vs threshold_backward)
#             and misaligned pairs (x = base[1:]); host time per call at 4096 elements (sweep.py)
#   l2band    the L2 band, 256 KiB-32 MiB, hot/rot/cold, both forms vs their best peers, the plain
#             Triton ReLU in 8 configs included (sweep.py --l2-band)
#   fallback  the noarch torch-cuda variant vs torch: GPU time 4 KiB-1 GiB and host time
#             (compare.py), its views (views.py), float8 through its Triton kernel (dtypes.py),
#             and the candidate rules it chose among, exactness and time (noarch_rules.py)
#   host      host time per call 4 KiB-1 MiB, the compiled variant vs torch (compare.py --parts host)
#   views     non-dense views vs torch (views.py)
#   dtypes    float8 and uint16-64 vs the upcast path and a copy (dtypes.py)
#   compile   torch.compile blocks, relu vs torch.relu compiled (compile_blocks.py)
#   training  the eager training step: the ReLU layer and an OPT-125m-shaped step (training_step.py)
#   bench     `kernels benchmark` on the snapshot (the Hub's own runner)
set -uo pipefail
cd "$(dirname "$0")/.."
device=cuda quick=()
for arg in "$@"; do
  case $arg in --quick) quick=(--quick) ;; --device=*) device=${arg#--device=} ;; cpu|cuda) device=$arg ;; esac
done
snapshot=${RELU_BUILD:-relu-build}
budget=${RELU_BUDGET_S:-510}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
  export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
fi
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
if [ "$device" = cuda ]; then
  compiled=$(ls -d "$snapshot"/build/torch-stable-abi*-cu130-x86_64-linux | head -1)
else
  compiled=$(ls -d "$snapshot"/build/torch-stable-abi*-cpu-x86_64-linux | head -1)
fi
noarch=$snapshot/build/torch-$device
[ -d "$compiled" ] && [ -d "$noarch" ] || { echo "no $compiled or $noarch: run scripts/release.sh first" >&2; exit 1; }
commit=$("$PYTHON" -c 'import json, sys
p = json.load(open(sys.argv[1] + "/metadata.json")).get("provenance", {}).get("kernel", {})
print(p["commit"][:7] + ("-dirty" if p.get("dirty") else "") if p.get("commit") else "")' "$compiled")
commit=${commit:-${RELU_GIT_REVISION:-unknown}}
build=$commit${quick:+-quick}
kind=$([ "$device" = cuda ] && echo h200 || echo cpu)
dir=results/$build/$kind
name=$build-$kind
mkdir -p "$dir"
{ echo "build: $snapshot at commit $commit (provenance of $compiled); measured by $(git describe --always --dirty 2>/dev/null || echo "${RELU_GIT_REVISION:-unknown}")"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null
  "$PYTHON" -c 'import platform, torch, kernels
try:
    import triton; t = triton.__version__
except Exception: t = None
print("python", platform.python_version(), "torch", torch.__version__, "triton", t, "kernels", kernels.__version__)'
  grep -m1 "model name" /proc/cpuinfo; echo "CPUs $(nproc); ISA flags: $(grep -o -w -E 'avx512(f|bw)|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  sha256sum "$snapshot"/build/*/*.so 2>/dev/null
} > "$dir/device.txt" 2>&1
cat "$dir/device.txt"

start=$SECONDS
status=()
stage() {  # <name> <seconds> <command...>: run it time-boxed, output in <dir>/run.log
  local name=$1 box=$2 left=$((budget - (SECONDS - start)))
  shift 2
  if [ "$left" -lt 15 ]; then status+=("$name: skipped (budget spent)"); return; fi
  [ "$box" -gt "$left" ] && box=$left
  echo "== $name at $((SECONDS - start)) s: $*" >> "$dir/run.log"
  local begin=$SECONDS
  timeout "$box" "$@" >> "$dir/run.log" 2>&1
  status+=("$name: exit $? in $((SECONDS - begin)) s")
}
sweep=("$PYTHON" benchmarks/sweep.py --device "$device" --kernel "$compiled")
if [ ${#quick[@]} -gt 0 ]; then  # --quiet-share 1: a smoke run waits for no quiet CPU
  quick=(--quick --quiet-share 1) dense=(--quick --quiet-share 1) sizes=(1) shapes=64x64 workloads=(activation)
else
  dense=(--dtypes float32 float16 bfloat16 int8 --sizes 4KiB 16KiB 64KiB 256KiB 1MiB 4MiB 8MiB 16MiB 32MiB 48MiB
         64MiB 96MiB 256MiB 1GiB --repeats 5)
  sizes=(1 16 256) shapes=4096x768 workloads=(activation opt125m)
fi
stage dense 190 "${sweep[@]}" "${dense[@]}" --no-compile --time-limit-s 120 --out "$dir/dense"
stage l2band 120 "${sweep[@]}" --l2-band "${quick[@]}" --time-limit-s 100 --out "$dir/l2-band"
stage fallback 75 "$PYTHON" benchmarks/compare.py --device "$device" ${quick[0]:+--quick --quiet-share 1} \
  --dtypes float32 bfloat16 int8 --build "noarch=$noarch" --out "$dir/fallback"
stage fallback-views 30 "$PYTHON" benchmarks/views.py --device "$device" "${quick[@]}" --kernel "$noarch" \
  --dtypes float32 bfloat16 --views contiguous chunk chunk-t cols-step2 --out "$dir/fallback/views"
stage fallback-float8 30 "$PYTHON" benchmarks/dtypes.py --device "$device" --kernel "$noarch" \
  --dtypes float8_e4m3fn float8_e5m2 --sizes "${sizes[@]}" --out "$dir/fallback"
stage fallback-rules 45 "$PYTHON" benchmarks/noarch_rules.py --device "$device" ${quick[0]:+--repeats 1 --quiet-share 1} \
  --out "$dir/fallback"
stage host 30 "$PYTHON" benchmarks/compare.py --device "$device" --parts host ${quick[0]:+--quiet-share 1} \
  --build "compiled=$compiled" --out "$dir/host"
stage views 60 "$PYTHON" benchmarks/views.py --device "$device" "${quick[@]}" --kernel "$compiled" --out "$dir/views"
stage dtypes 45 "$PYTHON" benchmarks/dtypes.py --device "$device" --kernel "$compiled" --sizes "${sizes[@]}" \
  --out "$dir/dtypes"
stage compile 90 "$PYTHON" benchmarks/compile_blocks.py --device "$device" ${quick[0]:+--quick} --kernel "$compiled" \
  --blocks square scale-shift mlp relu-bfloat16 --out "$dir/compile"
stage training 45 "$PYTHON" benchmarks/training_step.py --device "$device" ${quick[0]:+--quick} --kernel "$compiled" \
  --dtypes bfloat16 --shapes $shapes --workloads "${workloads[@]}" --out "$dir/training/training_step.json"
stage bench 45 "$PYTHON" scripts/kernels_cli_offline.py benchmark "$snapshot" --output "$dir/kernels-benchmark.json"
for json in "$dir"/dense/sweep.json "$dir"/l2-band/sweep.json; do
  [ -f "$json" ] && "$PYTHON" benchmarks/report.py "$json" > "${json%.json}.md"
done
printf '%s\n' "${status[@]}" > "$dir/stages.txt"
"$PYTHON" benchmarks/summary.py "$dir" > "$dir/summary.md" 2>&1
if [ -n "${OUT:-}" ]; then
  tar -czf "$OUT/$name.tar.gz" -C results "$build/$kind"
  echo "packed: $OUT/$name.tar.gz ($(du -h "$OUT/$name.tar.gz" | cut -f1)); unpack with tar -xzf into results/"
fi
cat "$dir/stages.txt" "$dir/summary.md"
