#!/usr/bin/env bash
# The main job: build this checkout for this machine, then benchmark it against torch.
#   scripts/bench.sh                      # CPU machine: about 10 minutes on 2 cores
#   scripts/bench.sh --quick              # a short smoke run
#   scripts/bench.sh --device cuda        # GPU machine: the full sweep (default there)
#   scripts/bench.sh --out /tmp/scratch   # somewhere else
# Extra arguments go to benchmarks/sweep.py. Writes results/<machine>/, a folder named for the
# machine it runs on (results/cpu-<CPU model>-<widest x86 vector ISA, or the arch>/,
# results/cuda-<GPU model>/: never another machine's results), or --out's folder:
# kernels-benchmark.json (`kernels benchmark .`), sweep.json, report.md (tables and targets),
# sweep_<mode>.png, and views/views.{json,md} (non-dense views against torch,
# benchmarks/views.py; --quick: its smoke run).
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
out_dir=""
prev=""
for arg in "$@"; do
  [ "$prev" = "--device" ] && device=$arg
  [ "$prev" = "--out" ] && out_dir=$arg
  case "$arg" in --out=*) out_dir=${arg#--out=} ;; esac
  prev=$arg
done
if [ -z "$out_dir" ]; then
  machine=$("$PYTHON" - "$device" <<'PY'
import platform, re, sys
import torch
if sys.argv[1] == "cuda":
    name, kind = torch.cuda.get_device_name(0).replace("NVIDIA", ""), "cuda"
else:
    kind, cpuinfo = "cpu", ""
    try:
        cpuinfo = open("/proc/cpuinfo").read()
    except OSError:
        pass
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    flags = set(flags.group(1).split()) if flags else set()
    isa = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else platform.machine()
    name = f"{model.group(1) if model else platform.processor() or 'unknown'} {isa}"
slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"\((r|tm)\)|\bcpu\b|processor", "", name.lower())).strip("-")
print(f"{kind}-{slug}")
PY
)
  out_dir=results/$machine
fi

build_args=(--backend "$device")
if [ "$device" = cuda ] && [ -n "${RELU_CUDA_ARCHS:-}" ]; then
  build_args+=(--cuda-archs $RELU_CUDA_ARCHS)  # e.g. RELU_CUDA_ARCHS=9.0 on the H200
fi
"$PYTHON" scripts/build_variant.py "${build_args[@]}"

mkdir -p "$out_dir"
"$PYTHON" -c 'import sys; from kernels.cli import main; sys.argv[0] = "kernels"; sys.exit(main())' \
  benchmark . --output "$out_dir/kernels-benchmark.json"
"$PYTHON" benchmarks/sweep.py --device "$device" --out "$out_dir" "$@"
"$PYTHON" benchmarks/report.py "$out_dir/sweep.json" > "$out_dir/report.md"
"$PYTHON" benchmarks/plot.py "$out_dir/sweep.json" || echo "warning: plots not rendered" >&2
views_args=()
for arg in "$@"; do [ "$arg" = --quick ] && views_args+=(--quick); done
mkdir -p "$out_dir/views"
"$PYTHON" benchmarks/views.py --device "$device" ${views_args[@]+"${views_args[@]}"} --out "$out_dir/views" | tee "$out_dir/views/views.md"
echo "results in $out_dir: report.md has the tables and the targets" >&2
