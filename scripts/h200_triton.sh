#!/usr/bin/env bash
# The noarch torch-cuda (Triton) variant on the lent H200 (device tool), cut to what only a
# GPU can tell: results under $OUT (results/h200/triton by default).
#
#   RELU_H200_STAGES="tests bench" scripts/h200_triton.sh      (the default stages)
#
# On the dev machine first: ../shared/device/fetch-wheels .whl (kernels for the H200's
# python3). Carry .whl; relu-build (scripts/release.sh) is optional: without it the compiled
# variant to compare with is built there for sm_90 while the tests run (about a minute). The
# device's copy of .git is not this checkout's: pass RELU_GIT_REVISION=$(git describe
# --always --dirty) from here. Stages:
#   tests  scripts/test_noarch.sh: the suite on build/torch-{cpu,cuda} staged there, on CUDA
#          tensors only (the CPU ones are CI's: RELU_TEST_TARGETS=cuda), every CUDA call
#          through Triton (RELU_TEST_NOARCH_PATH=triton), 8 workers when pytest-xdist is
#          there ($RELU_H200_TESTS: pytest arguments instead of -q)                  -> tests.log
#   bench  benchmarks/studies/triton_compare.py --quick: host time per call 4 KiB-1 MiB (both
#          paths: the small-call threshold), dense float32/bfloat16 at 1, 16, 256 MiB, views;
#          beside the compiled variant and torch                                     -> triton_compare.json, report.md
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/h200/triton}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, kernels, triton; print("torch", torch.__version__, "kernels", kernels.__version__, "triton", triton.__version__)'
  lscpu | grep -E "Model name|^CPU\(s\)"
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
stages=${RELU_H200_STAGES:-tests bench}
wants() { [[ " $stages " == *" $1 "* ]]; }

compiled=relu-build/build/torch-stable-abi211-cu130-x86_64-linux
if wants bench && [ ! -d "$compiled" ]; then  # built while the suite runs
  (python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0 --build-dir .cache/h200-compiled) > /tmp/compiled_build.log 2>&1 &
  building=$!
  compiled=.cache/h200-compiled/torch-stable-abi211-cu130-x86_64-linux
fi
workers=()
python3 -c 'import xdist' 2>/dev/null && workers=(-n 8)
status=0
for stage in $stages; do
  start=$SECONDS
  case $stage in
    tests)
      RELU_TEST_TARGETS=cuda RELU_TEST_NOARCH_PATH=triton timeout 240 scripts/test_noarch.sh "${workers[@]}" \
        ${RELU_H200_TESTS:--q} -rfs -p no:cacheprovider > "$OUT/tests.log" 2>&1
      status=$?
      tail -25 "$OUT/tests.log" ;;
    bench)
      if [ -n "${building:-}" ]; then wait "$building" || { tail -20 /tmp/compiled_build.log; exit 1; }; fi
      # test_noarch.sh stages build/torch-cuda; stage it here too when the tests did not run.
      python3 scripts/build_variant.py --noarch --backend cuda --build-dir .cache/noarch/build > /dev/null || exit 1
      timeout 150 python3 benchmarks/studies/triton_compare.py --quick --repeats 5 --triton .cache/noarch/build/torch-cuda \
        --compiled "$compiled" --revision "${RELU_GIT_REVISION:-unknown}" --out "$OUT" 2>&1 | tail -40 ;;
  esac
  echo "$stage: $((SECONDS - start)) s"
done
exit $status
