#!/usr/bin/env bash
# relu_squared on the lent H200 in one device call (about 8.5 minutes; --quick about 4): build, its
# tests, its three benchmarks, every result in ONE folder, results/h200/relu-squared-<revision>/,
# packed into one tarball under $OUT beside summary.md (the device returns at most 8 files).
#
#   scripts/h200_relu_squared.sh                 # on the H200; carry .whl
#   scripts/h200_relu_squared.sh --quick         # every stage at smoke size
#   scripts/h200_relu_squared.sh --standin       # no build, no tests: the harnesses on the torch
#                                                # stand-in (benchmarks/relu_squared_standin.py)
#   scripts/h200_relu_squared.sh --fetch-wheels  # ON THE DEV MACHINE, before the call: .whl/
#
# --fetch-wheels: kernels and liger-kernel (../shared/device/fetch-wheels), and transformers with
# the dependencies the H200 image may lack, as cp312 wheels in .whl/transformers/ (numpy, pyyaml
# and packaging left out: the image has them). On the H200 the top-level wheels go to .site
# (../shared/H200.md); transformers, where python3 lacks it, into a venv over the system's
# site-packages (pip installs only what is missing there), used by the client alone.
# PYTHON (default python3); RELU_DEVICE=cpu runs the same stages on the CPU (a smoke test of this
# script: RELU_DEVICE=cpu PYTHON=.venv/bin/python scripts/h200_relu_squared.sh --quick --standin).
# RELU_BUDGET_S (default 530): the seconds all stages may take together; each stage's box is cut
# to what is left, and a stage with less than 20 s left is skipped and says so. Stages in order:
#   build     the CUDA variant for sm_90 (scripts/build_variant.py; the CPU one beside it, for the
#             tests' session start)
#   tests     pytest -k "relu_squared or squared" on the CUDA variant
#   forward   benchmarks/relu_squared.py: forward 4 KiB-1 GiB x 3 dtypes, cold/hot, both forms;
#             forward + backward of the layer 64 KiB-1 GiB, bfloat16 and float32
#   compile   benchmarks/compile_blocks.py --activation relu_squared, bfloat16 blocks
#   client    benchmarks/relu2_client.py: an Arcee-shaped model, plain vs swapped, eager/compiled
#   suite     the rest of the CUDA tests (RELU_TEST_TARGETS=cuda), with what time is left
set -uo pipefail
cd "$(dirname "$0")/.."
quick=() standin=()
for arg in "$@"; do
  case $arg in
    --quick) quick=(--quick) ;;
    --standin) standin=(--standin) ;;
    --fetch-wheels)
      sh ../shared/device/fetch-wheels .whl || exit 1
      python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl/transformers transformers==5.24.0 || exit 1
      rm -f .whl/transformers/numpy-* .whl/transformers/pyyaml-* .whl/transformers/packaging-*
      du -sh .whl .whl/transformers
      exit 0 ;;
  esac
done
budget=${RELU_BUDGET_S:-530}
device=${RELU_DEVICE:-cuda}
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 RELU_CUDA_ARCHS=${RELU_CUDA_ARCHS-9.0}
"$PYTHON" -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
revision=${RELU_GIT_REVISION:-$(git describe --always --dirty 2>/dev/null || echo unknown)}
name=relu-squared${quick:+-quick}${standin:+-standin}
dir=results/$revision/$([ "$device" = cuda ] && echo h200 || echo cpu)/$name
mkdir -p "$dir"
OUT=${OUT:-$dir/out}
mkdir -p "$OUT"

client=("$PYTHON")
if ! "$PYTHON" -c 'import transformers' 2>/dev/null && [ -d .whl/transformers ]; then
  # A venv over the system's site-packages: pip adds only what the image lacks. An older pip
  # (no --python): every carried wheel into .site-client, on the client's path alone.
  if "$PYTHON" -m venv --system-site-packages --without-pip .venv-client &&
     "$PYTHON" -m pip --python .venv-client/bin/python install -q --no-index --find-links .whl/transformers \
       transformers==5.24.0; then
    client=(.venv-client/bin/python)
  elif "$PYTHON" -m pip install -q --no-index --no-deps --target .site-client .whl/transformers/*.whl; then
    client=(env "PYTHONPATH=$PYTHONPATH:$PWD/.site-client" "$PYTHON")
  fi
fi
what="the build of this checkout"
[ ${#standin[@]} -gt 0 ] && what="the torch stand-in"
{ echo "revision $revision; device $device; measured: $what"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>/dev/null
  "$PYTHON" -c 'import platform, torch, kernels, triton
try:
    import liger_kernel.ops.relu_squared; from importlib.metadata import version; liger = version("liger-kernel")
except Exception as exc: liger = f"none ({exc})"
print("python", platform.python_version(), "torch", torch.__version__, "triton", triton.__version__,
      "kernels", kernels.__version__, "liger-kernel", liger)'
  "${client[@]}" -c 'import transformers; print("transformers", transformers.__version__)' 2>&1 | tail -1
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
  # What is done so far, under $OUT after every stage: a call cut short still returns it.
  printf '%s\n' "${status[@]}" > "$dir/stages.txt"
  tar -czf "$OUT/$name-partial.tar.gz" --exclude "$name/out" -C "$(dirname "$dir")" "$name" 2>/dev/null
  return $rc
}
kernel=()
if [ ${#standin[@]} -eq 0 ]; then
  "$PYTHON" scripts/build_variant.py --backend cpu > "$dir/build_cpu.log" 2>&1 &
  cpu_build=$!
  if [ "$device" = cuda ]; then
    stage build 260 "$PYTHON" scripts/build_variant.py --backend cuda --cuda-archs $RELU_CUDA_ARCHS
    built=$?
  fi
  wait $cpu_build
  [ "$device" = cuda ] || built=$?
  variant=$(ls -d build/*-$([ "$device" = cuda ] && echo cu || echo cpu)*-x86_64-linux 2>/dev/null | head -1)
  if [ $built -ne 0 ] || [ -z "$variant" ]; then
    tail -40 "$dir/run.log" "$dir/build_cpu.log"; echo "the $device build failed: see $dir/run.log (--standin runs the harnesses without it)"
    exit 1
  fi
  kernel=(--kernel "$variant")
  RELU_TEST_TARGETS=$device stage tests ${RELU_TESTS_BOX_S:-120} "$PYTHON" -m pytest -q -rs -p no:cacheprovider \
    tests/test_relu_squared.py tests/test_gated.py tests/test_kernelize.py -k "not test_kernelized_function and not test_deprecated"
fi
if [ ${#quick[@]} -gt 0 ]; then
  sweep=(--quick) blocks=(--quick --repeats 3 --calls 3) client_args=(--quick)
else
  sweep=(--repeats 5 --time-limit-s 150) blocks=(--repeats 7 --calls 5) client_args=(--rounds 5)
fi
[ "$device" = cpu ] && sweep+=(--quiet-share 1 --min-sample-ms 5) client_args+=(--quiet-share 1)
stage forward 175 "$PYTHON" benchmarks/relu_squared.py --device "$device" "${kernel[@]}" "${standin[@]}" "${sweep[@]}" \
  --out "$dir"
stage compile 80 "$PYTHON" benchmarks/compile_blocks.py --device "$device" --activation relu_squared "${kernel[@]}" \
  "${standin[@]}" "${blocks[@]}" --out "$dir/compile"
stage client 150 "${client[@]}" benchmarks/relu2_client.py --device "$device" "${kernel[@]}" "${standin[@]}" \
  "${client_args[@]}" --out "$dir/client"
if [ ${#standin[@]} -eq 0 ]; then  # the rest of the CUDA suite with what is left
  RELU_TEST_TARGETS=$device stage suite 300 "$PYTHON" -m pytest tests -q -rs -p no:cacheprovider -m cuda \
    -k "not relu_squared and not squared"
fi

printf '%s\n' "${status[@]}" > "$dir/stages.txt"
{ echo "# relu_squared on the H200, $name"; echo; cat "$dir/device.txt"; echo; cat "$dir/stages.txt"
  echo; grep -E "passed|failed|error" "$dir/run.log" | grep -E "^[0-9=]|^FAILED|^ERROR" | tail -20
  for md in "$dir/relu_squared.md" "$dir/client/relu2_client.md"; do [ -f "$md" ] && { echo; cat "$md"; }; done
  for json in "$dir"/compile/*.json; do
    [ -f "$json" ] && "$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("\n## compiled blocks, bfloat16 (torch compiled / ours compiled; above 1: ours is faster)\n")
for r in d["records"]:
    times = ", ".join("%s %.1f us" % (k, v * 1e6) for k, v in r["seconds"].items())
    print("- %s %s: %s; ratio %.3f" % (r["block"], r["pass"], times, r["torch_compiled_over_ours_compiled"]))' "$json"
  done
} > "$dir/summary.md" 2>&1
cp "$dir/summary.md" "$OUT/summary.md"
tar -czf "$OUT/$name.tar.gz" --exclude "$name/out" -C "$(dirname "$dir")" "$name" && rm -f "$OUT/$name-partial.tar.gz"
echo "packed: $OUT/$name.tar.gz; unpack with tar -xzf into $(dirname "$dir")/"
cat "$dir/summary.md"
