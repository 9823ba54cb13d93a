#!/usr/bin/env bash
# The stable-ABI release set on the lent H200 (device tool), unchanged: the binaries built on
# the dev machine (scripts/release.sh: torch 2.14.1 headers, nvcc 13.0, no GPU) run under the
# H200's torch 2.11.0+cu130. Results under $OUT (results/h200/stable-abi by default).
#
#   RELU_H200_STAGES="tests bench compare" scripts/h200_release.sh     (the default stages)
#
# On the dev machine first: scripts/release.sh; ../shared/device/fetch-wheels .whl; for
# `compare`, the last full-ABI main as source in .baseline/ (git archive f7a83e7 | tar -x -C
# .baseline). Carry relu-build, .whl (and .baseline). The device's copy of .git is not this
# checkout's: pass RELU_GIT_REVISION=$(git describe --always --dirty) from here, or the JSON
# files name a stale commit. For the cu12 stages (OUT=results/h200/cu12), also the ptx70
# build: .venv-release/bin/python scripts/build_variant.py --backend cuda --cuda-toolchain
# scripts/toolchains/cuda12.sh --cuda-archs 7.0+PTX --build-dir .cache/sm70-ptx/build;
# carry .cache/toolchains/cuda-12.4/lib64 (libcudart.so.12, 4 MB) and .cache/sm70-ptx. Stages:
#   tests    the whole suite ($RELU_H200_TESTS: a part) on relu-build/     -> tests.log
#   bench    kernels benchmark on relu-build/                              -> kernels-benchmark.{json,log}
#   compare  this build beside the full-ABI main built here (studies/abi_compare) -> abi_compare_cuda.json
#   compile  torch.compile blocks (benchmarks/studies/compile_blocks.py)   -> compile-blocks/
#   dtypes   float8 / wide unsigned vs the upcast path (studies/new_dtypes) -> new-dtypes/
#   sweep    like-for-like sweep subset (sweep.py, $RELU_SWEEP_ARGS)       -> like-for-like/
#   l2band   the L2 band alone (sweep.py --l2-band; report.py's table)     -> l2-band/{sweep.json,report.md}
#   views    non-dense views vs torch, GPU time (benchmarks/views.py)       -> views/
#   cpusweep the host CPU: like-for-like sweep ($RELU_CPU_SWEEP_ARGS)      -> cpu-<isa>/sweep.json
#   cpuviews the host CPU: views vs torch (views.py --device cpu)          -> cpu-<isa>/views.json
#   cpucall  the host CPU: a small call's layers (studies/call_path.py)    -> cpu-<isa>/call_path.json
# The cu124 variant: no torch >= 2.11 built for CUDA 12 is reachable, so it runs under this
# torch (CUDA 13) beside its own libcudart.so.12, as a cu12x torch's process holds it, with
# kernels told that torch's CUDA is 12.8 (tests/kernels_sees_cuda) so that it picks cu124:
#   cu12     the suite's CUDA-device tests on cu124 (its sm_90 cubin)      -> cu12-tests.log
#   ptx70    the kernels' tests among those (dense, strided, every dtype, backward; not
#            the slow ones) on a cu124 build for 7.0+PTX: an sm_70 cubin, which sm_90 cannot
#            run, and compute_70 PTX, which the driver JIT-compiles for it. That PTX is what
#            the sm_70/sm_75 cubins are assembled from (nothing in it branches on the arch),
#            run on a GPU                                                  -> ptx70.log
#   cu12compare  cu124 beside cu130 in one process (studies/abi_compare)     -> abi_compare_cuda.json
# Each benchmark rewrites its one JSON file after every point: a stage cut short keeps what
# it measured (the device returns at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/h200/stable-abi}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, kernels; print("torch", torch.__version__, "kernels", kernels.__version__)'
  sha256sum relu-build/build/*/*.so
  lscpu | grep -E "Model name|^CPU\(s\)|L2|L3"; grep -o -w -E "avx512(f|bw|vl|dq)|avx2" /proc/cpuinfo | sort -u | tr '\n' ' '
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
kernel=relu-build/build/torch-stable-abi211-cu130-x86_64-linux
stages=${RELU_H200_STAGES:-tests bench compare}
cu12_runtime=$PWD/.cache/toolchains/cuda-12.4/lib64
cu12_suite() {  # <prebuilt dir> <pytest arguments: test paths, options>...
  PYTHONPATH=$PWD/tests/kernels_sees_cuda:$PYTHONPATH RELU_TEST_KERNELS_CUDA=12.8 \
    LD_LIBRARY_PATH=$cu12_runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} RELU_TEST_PREBUILT=$1 \
    python3 -m pytest -q -rfs -p no:cacheprovider -k "cuda and not variant-on-cpu" "${@:2}"
}
cpu_dir() { grep -q -w avx512bw /proc/cpuinfo && echo cpu-avx512 || echo cpu-avx2; }
wants() { [[ " $stages " == *" $1 "* ]]; }

if wants compare; then  # the baseline (sm_90 only) builds while the suite runs
  (cd .baseline && python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0) > /tmp/baseline_build.log 2>&1 &
  baseline=$!
fi
status=0
for stage in $stages; do
  start=$SECONDS
  case $stage in
    tests)
      RELU_TEST_PREBUILT=relu-build python3 -m pytest ${RELU_H200_TESTS:-tests} -q -rfs -p no:cacheprovider > "$OUT/tests.log" 2>&1
      status=$?
      tail -25 "$OUT/tests.log" ;;
    cu12)
      { readelf -d relu-build/build/*-cu124-*/*.so | grep -E "NEEDED.*cudart"
        cuobjdump --list-elf --list-ptx relu-build/build/*-cu124-*/*.so .cache/sm70-ptx/build/*-cu124-*/*.so
        sha256sum .cache/sm70-ptx/build/*/*.so "$cu12_runtime/libcudart.so.12"; } >> "$OUT/device.txt" 2>&1
      cu12_suite relu-build tests > "$OUT/cu12-tests.log" 2>&1
      status=$?
      tail -15 "$OUT/cu12-tests.log" ;;
    ptx70)
      # CUDA_FORCE_PTX_JIT: the driver takes the PTX, never a cubin.
      cp -r relu-build/build/*-cpu-x86_64-linux .cache/sm70-ptx/build/ &&
        CUDA_FORCE_PTX_JIT=1 cu12_suite .cache/sm70-ptx -m "not slow" tests/test_cuda.py tests/test_contract.py \
          tests/test_views.py tests/test_new_dtypes.py tests/test_autograd.py > "$OUT/ptx70.log" 2>&1
      status=$((status | $?))
      tail -15 "$OUT/ptx70.log" ;;
    cu12compare)
      # get_local_kernel on a variant directory loads it as it is, whatever torch's CUDA.
      LD_LIBRARY_PATH=$cu12_runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} python3 benchmarks/studies/abi_compare.py --device cuda \
        --new relu-build/build/torch-stable-abi211-cu124-x86_64-linux --old $kernel --repeats 7 --out "$OUT" 2>&1 | tail -3 ;;
    bench)
      python3 scripts/kernels_cli_offline.py benchmark relu-build --output "$OUT/kernels-benchmark.json" \
        > "$OUT/kernels-benchmark.log" 2>&1
      tail -12 "$OUT/kernels-benchmark.log" ;;
    compare)
      wait $baseline || { tail -20 /tmp/baseline_build.log; exit 1; }
      python3 benchmarks/studies/abi_compare.py --new $kernel --old .baseline/build/torch211-cxx11-cu130-x86_64-linux \
        --device cuda --out "$OUT" 2>&1 | tail -3 ;;
    compile) python3 benchmarks/studies/compile_blocks.py --device cuda --kernel $kernel --out "$OUT/compile-blocks" 2>&1 | tail -5 ;;
    dtypes) python3 benchmarks/studies/new_dtypes.py --device cuda --kernel $kernel --out "$OUT/new-dtypes" 2>&1 | tail -5 ;;
    # sweep.py loads the checkout's build/: the release binaries, unchanged.
    sweep) mkdir -p build && cp -r relu-build/build/. build/ &&
           python3 benchmarks/sweep.py --device cuda ${RELU_SWEEP_ARGS:-} --out "$OUT/like-for-like" 2>&1 | tail -5 ;;
    l2band) mkdir -p "$OUT/l2-band" &&
            python3 benchmarks/sweep.py --device cuda --l2-band --kernel relu-build --out "$OUT/l2-band" 2>&1 | tail -5 &&
            python3 benchmarks/report.py "$OUT/l2-band/sweep.json" > "$OUT/l2-band/report.md" &&
            sed -n '/^\*\*L2 band/,$p' "$OUT/l2-band/report.md" | head -80 ;;
    views) mkdir -p build && cp -r relu-build/build/. build/ &&
           python3 benchmarks/views.py --device cuda --out "$OUT/views" 2>&1 | tail -40 ;;
    # The host's CPU, named by its ISA (the same binaries).
    cpusweep) mkdir -p build && cp -r relu-build/build/. build/ &&
              python3 benchmarks/sweep.py --device cpu ${RELU_CPU_SWEEP_ARGS:-} --out "$OUT/$(cpu_dir)" 2>&1 | tail -3 &&
              python3 benchmarks/report.py "$OUT/$(cpu_dir)/sweep.json" > "$OUT/$(cpu_dir)/report.md" ;;
    cpucall) python3 benchmarks/studies/call_path.py --kernel relu-build/build/torch-stable-abi211-cpu-x86_64-linux \
               --out "$OUT/$(cpu_dir)/call_path.json" 2>&1 | tail -30 ;;
    cpuviews) mkdir -p build && cp -r relu-build/build/. build/ &&
              python3 benchmarks/views.py --device cpu --out "$OUT/$(cpu_dir)" 2>&1 | tail -40 ;;
  esac
  echo "$stage: $((SECONDS - start)) s"
done
exit $status
