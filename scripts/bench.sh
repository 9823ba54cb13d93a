#!/usr/bin/env bash
# The main job: build this checkout for this machine, then measure it against torch: every CPU
# figure the docs quote, into one folder named for the machine.
#   scripts/bench.sh                      # CPU machine: about 15 minutes on 2 cores
#   scripts/bench.sh --quick              # a short smoke run (every step, tiny sizes)
#   scripts/bench.sh --out /tmp/scratch   # somewhere else
# Extra arguments go to benchmarks/sweep.py. Writes results/<machine>/ (results/cpu-<CPU
# model>-<widest x86 vector ISA, or the arch>/, results/cuda-<GPU model>/: never another
# machine's results), or --out's folder:
#   machine.txt              the CPU model, its vector ISA flags, cores, torch, the revision
#   kernels-benchmark.json   `kernels benchmark .` (the Hub's runner: host-timed calls)
#   sweep.json, report.md    the dense sweep against torch, like for like (benchmarks/sweep.py)
#   views/                   non-dense views against torch (benchmarks/views.py)
#   dtypes.json              float8 and uint16-64 against the upcast path (benchmarks/dtypes.py)
#   compare_cpu.json         host time per call and CPU time: the compiled variant and the
#                            noarch torch-cpu fallback against torch (benchmarks/compare.py)
#   training_step.json       an eager training step, nn.ReLU and kernelized (CPU)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
if ! "$PYTHON" -c 'import tqdm, tabulate' 2>/dev/null && [ "$PYTHON" != python3 ]; then
  scripts/pip_install.sh "$PYTHON" -r requirements-dev.txt  # `kernels benchmark`'s table needs tabulate
fi

device=$("$PYTHON" -c 'import torch; print("cuda" if torch.cuda.is_available() else "cpu")')
out_dir="" prev="" quick=() quiet=()
for arg in "$@"; do
  [ "$prev" = "--device" ] && device=$arg
  [ "$prev" = "--out" ] && out_dir=$arg
  [ "$prev" = "--quiet-share" ] && quiet=(--quiet-share "$arg")  # the views too
  case "$arg" in --device=*) device=${arg#--device=} ;; --out=*) out_dir=${arg#--out=} ;; --quick) quick=(--quick) ;; esac
  prev=$arg
done
machine=$("$PYTHON" - "$device" <<'PY'
import platform, re, sys
import torch
if sys.argv[1] == "cuda":
    name, kind = torch.cuda.get_device_name(0).replace("NVIDIA", ""), "cuda"
else:
    kind, cpuinfo = "cpu", open("/proc/cpuinfo").read() if platform.system() == "Linux" else ""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = set((re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M) or [None, ""])[1].split())
    isa = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else platform.machine()
    name = f"{model.group(1) if model else platform.processor() or 'unknown'} {isa}"
slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"\((r|tm)\)|\bcpu\b|processor", "", name.lower())).strip("-")
print(f"{kind}-{slug}")
PY
)
out_dir=${out_dir:-results/$machine}
mkdir -p "$out_dir"
{ grep -m1 "model name" /proc/cpuinfo || uname -m
  echo "vector ISA flags: $(grep -o -w -E 'avx512(f|bw|vl|dq)|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  grep -m1 -E "^cpu family" /proc/cpuinfo; grep -m1 -E "^model\s" /proc/cpuinfo; echo "cores: $(nproc)"
  "$PYTHON" -c 'import torch, kernels; print("torch", torch.__version__, "threads", torch.get_num_threads(), "kernels", kernels.__version__)'
  echo "revision $(git describe --always --dirty 2>/dev/null || echo "${RELU_GIT_REVISION:-unknown}")"
} > "$out_dir/machine.txt"
cat "$out_dir/machine.txt"

build_args=(--backend "$device")
if [ "$device" = cuda ] && [ -n "${RELU_CUDA_ARCHS:-}" ]; then
  build_args+=(--cuda-archs $RELU_CUDA_ARCHS)  # e.g. RELU_CUDA_ARCHS=9.0 on the H200
fi
# build_variant.py prints the variant directory last.
compiled=$("$PYTHON" scripts/build_variant.py "${build_args[@]}" | tee /dev/stderr | tail -1)
noarch=$("$PYTHON" scripts/build_variant.py --noarch --backend "$device" --build-dir .cache/bench-noarch/build | tail -1)

"$PYTHON" scripts/kernels_cli_offline.py benchmark . --output "$out_dir/kernels-benchmark.json"
"$PYTHON" benchmarks/sweep.py --device "$device" --out "$out_dir" "$@"
"$PYTHON" benchmarks/report.py "$out_dir/sweep.json" > "$out_dir/report.md"
mkdir -p "$out_dir/views"
"$PYTHON" benchmarks/views.py --device "$device" "${quick[@]}" "${quiet[@]}" --out "$out_dir/views" | tee "$out_dir/views/views.md"
sizes=(1 16 256)
[ ${#quick[@]} -gt 0 ] && sizes=(1)
"$PYTHON" benchmarks/dtypes.py --device "$device" --sizes "${sizes[@]}" --out "$out_dir"
"$PYTHON" benchmarks/compare.py --device "$device" "${quick[@]}" --build "compiled=$compiled" --build "noarch=$noarch" \
  --out "$out_dir"
"$PYTHON" benchmarks/training_step.py --device "$device" "${quick[@]}" --out "$out_dir/training_step.json"
echo "results in $out_dir: report.md has the sweep's tables and targets; machine.txt names the CPU" >&2
