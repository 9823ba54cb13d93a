#!/usr/bin/env bash
# Whether the house clean-up kept everything on the lent H200, in one device call: the CUDA suite
# of the family on the carried build, then benchmarks/compare.py against a baseline build in both
# orders (GPU time, hot, and host time per call), and benchmarks/host_path.py (each private torch
# name against its public replacement). Results in results/h200/house-<revision>/, packed into
# $OUT/house-<revision>.tar.gz after every stage.
#
#   RELU_GIT_REVISION=<commit> RELU_BASELINE=.baseline/3bf4daf/torch-stable-abi211-cu130-x86_64-linux \
#     scripts/h200_house.sh
#
# Carry .whl (../shared/device/fetch-wheels .whl), build/torch-stable-abi211-{cu130,cpu}-x86_64-linux
# (scripts/build_variant.py here) and the baseline variant (the same command in a worktree of
# the baseline commit). RELU_BUDGET_S (default 560) bounds all stages together; RELU_COMPARE_PARTS
# (default "gpu host") picks compare.py's parts.
set -uo pipefail
cd "$(dirname "$0")/.."
budget=${RELU_BUDGET_S:-560}
baseline=${RELU_BASELINE:?the baseline variant directory}
variant=build/torch-stable-abi211-cu130-x86_64-linux
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 RELU_CUDA_ARCHS=9.0 RELU_TEST_PREBUILT=$PWD RELU_TEST_TARGETS=cuda
revision=${RELU_GIT_REVISION:-unknown}
export RELU_GIT_REVISION=$revision
run=house-$revision
dir=results/h200/$run
mkdir -p "$dir" "${OUT:=$dir/out}"
{ echo "revision $revision; new $variant; old $baseline"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import platform, torch, kernels, triton
print("python", platform.python_version(), "torch", torch.__version__, "triton", triton.__version__, "kernels", kernels.__version__)'
  grep -m1 "model name" /proc/cpuinfo; echo "CPUs $(nproc)"
  sha256sum "$variant"/*.so "$baseline"/*.so
} > "$dir/device.txt" 2>&1
cat "$dir/device.txt"

start=$SECONDS
stage() {  # <name> <seconds> <command...>: time-boxed, logged, then everything packed
  local name=$1 box=$2 left=$((budget - (SECONDS - start)))
  shift 2
  if [ "$left" -lt 20 ]; then echo "$name: skipped (budget spent)" >> "$dir/stages.txt"; return; fi
  [ "$box" -gt "$left" ] && box=$left
  local begin=$SECONDS
  timeout "$box" "$@" > "$dir/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - begin)) s (box $box s)" >> "$dir/stages.txt"
  tail -4 "$dir/$name.log"
  tar -czf "$OUT/$run.tar.gz" --exclude "$run/out" -C "$(dirname "$dir")" "$run"
}
stage tests 200 python3 -m pytest -q -rfs -p no:cacheprovider -n 8 tests/test_cuda.py tests/test_relu_squared.py \
  tests/test_gated.py tests/test_kernelize.py tests/test_compile.py tests/test_autograd.py tests/test_eager_path.py \
  tests/test_views.py tests/test_misaligned.py tests/test_contract.py tests/test_overlap.py tests/test_new_dtypes.py
for order in "new old" "old new"; do
  set -- $order
  builds=()
  for side in "$@"; do builds+=(--build "$side=$([ "$side" = new ] && echo "$variant" || echo "$baseline")"); done
  stage "compare-$1-first" 150 python3 benchmarks/compare.py --device cuda --modes hot "${builds[@]}" \
    --parts ${RELU_COMPARE_PARTS:-gpu host} --repeats 7 --out "$dir/compare-$1-first"
done
stage host-path 60 python3 benchmarks/host_path.py --device cuda --build "$variant" --out "$dir"
cat "$dir/stages.txt"
