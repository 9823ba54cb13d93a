#!/usr/bin/env bash
# The main job: build this checkout for this machine, then benchmark it against torch.
#   scripts/bench.sh                      # CPU machine: about 10 minutes on 2 cores
#   scripts/bench.sh --quick              # a short smoke run
#   scripts/bench.sh --device cuda        # GPU machine: the full sweep (default there)
# Extra arguments go to benchmarks/sweep.py. Writes results/<device>/: kernels-benchmark.json
# (`kernels benchmark .`), sweep.json, report.md (tables and targets), sweep_<mode>.png, and
# views/views.{json,md} (non-dense views against torch, benchmarks/views.py; --quick: its smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
# Plotting, the progress bar and `kernels benchmark`'s table need these (requirements-dev.txt);
# env.sh's readiness check covers only the build and the tests.
if ! "$PYTHON" -c 'import matplotlib, tqdm, tabulate' 2>/dev/null; then
  if [ "$PYTHON" != python3 ]; then
    "$PYTHON" -m pip install -q -r requirements-dev.txt
  else
    echo "warning: matplotlib/tqdm/tabulate missing for $PYTHON; plots or tables may be skipped" >&2
  fi
fi

device=$("$PYTHON" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")')
for arg in "$@"; do
  case "$arg" in --device=*) device=${arg#--device=} ;; esac
done
prev=""
for arg in "$@"; do
  [ "$prev" = "--device" ] && device=$arg
  prev=$arg
done

build_args=(--backend "$device")
if [ "$device" = cuda ] && [ -n "${RELU_CUDA_ARCHS:-}" ]; then
  build_args+=(--cuda-archs $RELU_CUDA_ARCHS)  # e.g. RELU_CUDA_ARCHS=9.0 on the H200
fi
"$PYTHON" scripts/build_variant.py "${build_args[@]}"

out_dir=$("$PYTHON" benchmarks/sweep.py --device "$device" --print-out-dir "$@")
mkdir -p "$out_dir"
"$PYTHON" -c 'import sys; from kernels.cli import main; sys.argv[0] = "kernels"; sys.exit(main())' \
  benchmark . --output "$out_dir/kernels-benchmark.json"
"$PYTHON" benchmarks/sweep.py --device "$device" "$@"
"$PYTHON" benchmarks/report.py "$out_dir/sweep.json" > "$out_dir/report.md"
"$PYTHON" benchmarks/plot.py "$out_dir/sweep.json" || echo "warning: plots not rendered" >&2
views_args=()
for arg in "$@"; do [ "$arg" = --quick ] && views_args+=(--quick); done
mkdir -p "$out_dir/views"
"$PYTHON" benchmarks/views.py --device "$device" ${views_args[@]+"${views_args[@]}"} --out "$out_dir/views" | tee "$out_dir/views/views.md"
echo "results in $out_dir: report.md has the tables and the targets" >&2
