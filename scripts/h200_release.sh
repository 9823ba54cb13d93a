#!/usr/bin/env bash
# The stable-ABI release set on the lent H200 (device tool), unchanged: the binaries built on
# the dev machine (scripts/release.sh: torch 2.14.1 headers, nvcc 13.0, no GPU) run under the
# H200's torch 2.11.0+cu130. Results under $OUT (results/h200/stable-abi by default).
#
#   RELU_H200_STAGES="tests bench compare" scripts/h200_release.sh     (the default stages)
#
# On the dev machine first: scripts/release.sh; ../shared/device/fetch-wheels .whl. Carry
# relu-build and .whl. The device's copy of .git is not this checkout's: pass
# RELU_GIT_REVISION=$(git describe --always --dirty) from here, or the JSON files name a stale
# commit. For the cu12 stages (OUT=results/h200/cu12), also the ptx70 build:
# .venv-release/bin/python scripts/build_variant.py --backend cuda --cuda-toolchain
# scripts/toolchains/cuda12.sh --cuda-archs 7.0+PTX --build-dir .cache/sm70-ptx/build;
# carry .cache/toolchains/cuda-12.4/lib64 (libcudart.so.12, 4 MB) and .cache/sm70-ptx. The
# docs' figures are another call's: scripts/h200_docs.sh. Stages:
#   tests    the whole suite ($RELU_H200_TESTS: a part) on relu-build/     -> tests.log
#   bench    kernels benchmark on relu-build/                              -> kernels-benchmark.{json,log}
#   compare  two builds side by side, $RELU_COMPARE_NEW against $RELU_COMPARE_OLD (variant
#            directories; benchmarks/compare.py: GPU time 4 KiB-1 GiB, cold and hot, and
#            host time per call)                                           -> compare/compare_cuda.json
# The cu124 variant: no torch >= 2.11 built for CUDA 12 is reachable, so it runs under this
# torch (CUDA 13) beside its own libcudart.so.12, as a cu12x torch's process holds it, with
# kernels told that torch's CUDA is 12.8 (tests/kernels_sees_cuda) so that it picks cu124:
#   cu12     the suite's CUDA-device tests on cu124 (its sm_90 cubin)      -> cu12-tests.log
#   ptx70    the kernels' tests among those (dense, strided, every dtype, backward; not
#            the slow ones) on a cu124 build for 7.0+PTX: an sm_70 cubin, which sm_90 cannot
#            run, and compute_70 PTX, which the driver JIT-compiles for it. That PTX is what
#            the sm_70/sm_75 cubins are assembled from (the 16-bit __hmax2 branch is sm_80+ only),
#            run on a GPU                                                  -> ptx70.log
#   cu12compare  cu124 beside cu130 in one process (benchmarks/compare.py)  -> compare_cuda.json
# RELU_PYTEST_ARGS goes to every pytest call (e.g. "-n 8": pytest-xdist is on the H200 image).
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
stages=${RELU_H200_STAGES:-tests bench}
cu12_runtime=$PWD/.cache/toolchains/cuda-12.4/lib64
cu12_suite() {  # <prebuilt dir> <pytest arguments: test paths, options>...
  PYTHONPATH=$PWD/tests/kernels_sees_cuda:$PYTHONPATH RELU_TEST_KERNELS_CUDA=12.8 \
    LD_LIBRARY_PATH=$cu12_runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} RELU_TEST_PREBUILT=$1 \
    python3 -m pytest -q -rfs -p no:cacheprovider ${RELU_PYTEST_ARGS:-} -k "cuda and not variant-on-cpu" "${@:2}"
}
wants() { [[ " $stages " == *" $1 "* ]]; }

status=0
for stage in $stages; do
  start=$SECONDS
  case $stage in
    tests)
      RELU_TEST_PREBUILT=relu-build python3 -m pytest ${RELU_H200_TESTS:-tests} -q -rfs -p no:cacheprovider ${RELU_PYTEST_ARGS:-} > "$OUT/tests.log" 2>&1
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
      # No CUDA_FORCE_PTX_JIT: it would force torch's own kernels, which ship no PTX, onto
      # PTX too (every test failed: no kernel image). sm_90 cannot run the sm_70 cubin, so the
      # driver JIT-compiles this build's compute_70 PTX by itself.
      cp -r relu-build/build/*-cpu-x86_64-linux .cache/sm70-ptx/build/ &&
        cu12_suite .cache/sm70-ptx -m "not slow" tests/test_cuda.py tests/test_contract.py \
          tests/test_views.py tests/test_new_dtypes.py tests/test_autograd.py > "$OUT/ptx70.log" 2>&1
      status=$((status | $?))
      tail -15 "$OUT/ptx70.log" ;;
    compare)  # two builds of the package side by side
      python3 benchmarks/compare.py --device cuda --modes hot cold --build "new=$RELU_COMPARE_NEW" \
        --build "old=$RELU_COMPARE_OLD" --repeats ${RELU_COMPARE_REPEATS:-7} --out "$OUT/compare" 2>&1 | tail -5 ;;
    cu12compare)
      # get_local_kernel on a variant directory loads it as it is, whatever torch's CUDA.
      LD_LIBRARY_PATH=$cu12_runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} python3 benchmarks/compare.py --device cuda \
        --build new=relu-build/build/torch-stable-abi211-cu124-x86_64-linux --build old=$kernel --repeats 7 --out "$OUT" 2>&1 | tail -3 ;;
    bench)
      python3 scripts/kernels_cli_offline.py benchmark relu-build --output "$OUT/kernels-benchmark.json" \
        > "$OUT/kernels-benchmark.log" 2>&1
      tail -12 "$OUT/kernels-benchmark.log" ;;
  esac
  echo "$stage: $((SECONDS - start)) s"
done
exit $status
