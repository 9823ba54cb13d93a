#!/usr/bin/env bash
# Host cost per call on the lent H200 (device tool): the noarch torch-cuda variant's eager
# path and the compiled variant's eager training, this tree beside a baseline tree, in one
# process each. Logs and results under $OUT (default results/h200/host-cost).
#
# Before the call, on the dev machine: ../shared/device/fetch-wheels .whl (kernels for the
# H200's python3); the baseline's sources in .baseline/main (e.g. `git -C <main checkout>
# archive HEAD build.toml flake.nix torch-ext relu-cuda relu-cpu relu-common relu-xpu scripts
# | tar -x -C .baseline/main`, then a comment line appended to its torch-ext/torch_binding.cpp:
# the op namespace hashes the compiled sources only, and two builds of one namespace cannot
# share a process); RELU_GIT_REVISION=$(git describe --always --dirty). Stages:
#   builds (in the background): this tree's cu130 and cpu variants (build/), the baseline's
#          cu130 variant (.cache/h200-old) and its noarch torch-cuda (.cache/noarch-main)
#   tests  the noarch suite's autograd, contract and eager-path tests on CUDA tensors, routed
#          as shipped, and the compiled variant's autograd and eager-path tests on CUDA; last,
#          views and eager-path tests with every CUDA call on Triton
#          (RELU_TEST_NOARCH_PATH=triton)                                    -> run.log
#   calls  benchmarks/studies/call_path.py --fallback: host time per call and its stages,
#          forward + backward and its stages, GPU time like for like, this tree's torch-cuda
#          beside the baseline's                                                -> fallback.json
#          the same forward + backward stages for the compiled cu130 variants   -> train_stages.json
#   train  benchmarks/studies/training_step.py: forward + backward of the ReLU layer on
#          4096 x 3072 bfloat16 and the OPT-125m-shaped step (3 runs), the compiled variant
#          of this tree and of the baseline beside nn.ReLU; the same layer on the noarch
#          variants                                        -> training.json, training_noarch.json (logs: run.log)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/h200/host-cost}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, kernels, triton; print("torch", torch.__version__, "kernels", kernels.__version__, "triton", triton.__version__)'
  lscpu | grep -E "Model name|^CPU\(s\)"
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
start=$SECONDS
stamp() { echo "== $1 at $((SECONDS - start)) s" | tee -a "$OUT/run.log"; }

python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0 > /tmp/new_cuda.log 2>&1 &
new_cuda=$!
python3 scripts/build_variant.py --backend cpu > /tmp/new_cpu.log 2>&1 &
new_cpu=$!
(cd .baseline/main && python3 scripts/build_variant.py --backend cuda --cuda-archs 9.0 --build-dir ../../.cache/h200-old) \
  > /tmp/old_cuda.log 2>&1 &
old_cuda=$!
(cd .baseline/main && python3 scripts/build_variant.py --noarch --backend cuda --build-dir ../../.cache/noarch-main/build) \
  > /tmp/old_noarch.log 2>&1 || { cat /tmp/old_noarch.log; exit 1; }

workers=()
python3 -c 'import xdist' 2>/dev/null && workers=(-n 6)
status=0
# Stages by priority, each time-boxed (one device call of at most 5 minutes).
stamp "noarch tests, as routed"
RELU_TEST_TARGETS=cuda RELU_NOARCH_TESTS="tests/test_autograd.py tests/test_contract.py tests/test_eager_path.py" \
  timeout 75 scripts/test_noarch.sh "${workers[@]}" -q -rfs -p no:cacheprovider >> "$OUT/run.log" 2>&1 || status=1
built=1
for job in $new_cuda $new_cpu $old_cuda; do wait $job || built=0; done
[ $built = 1 ] || { tail -n 20 /tmp/new_cuda.log /tmp/new_cpu.log /tmp/old_cuda.log >> "$OUT/run.log"; status=1; }
if [ $built = 1 ]; then
  stamp "compiled variant: tests/test_autograd.py tests/test_eager_path.py"
  RELU_TEST_TARGETS=cuda RELU_CUDA_ARCHS=9.0 timeout 35 python3 -m pytest -q -rfs -p no:cacheprovider \
    tests/test_autograd.py tests/test_eager_path.py >> "$OUT/run.log" 2>&1 || status=1
fi
grep -E "passed|failed|error" "$OUT/run.log" | tail -4

stamp "calls"
new_noarch=.cache/noarch/build/torch-cuda
timeout 75 python3 benchmarks/studies/call_path.py --fallback $new_noarch --baseline .cache/noarch-main/build/torch-cuda \
  --device cuda --parts calls train gpu --calls 1000 --repeats 5 --out "$OUT/fallback.json" >> "$OUT/run.log" 2>&1 \
  || status=1
if [ $built = 1 ]; then
  stamp "train"
  old_compiled=$(ls -d .cache/h200-old/torch-stable-abi*-cu130-*)
  new_compiled=$(ls -d build/torch-stable-abi*-cu130-*)
  timeout 25 python3 benchmarks/studies/call_path.py --variant "$new_compiled" --baseline "$old_compiled" --device cuda \
    --parts train --repeats 7 --out "$OUT/train_stages.json" >> "$OUT/run.log" 2>&1 || status=1
  timeout 45 python3 benchmarks/studies/training_step.py --device cuda --kernel "$new_compiled" --baseline "$old_compiled" \
    --shapes 4096x768 --dtypes bfloat16 --workloads activation opt125m --runs 3 --repeats 7 --aten-backward-peer \
    --out "$OUT/training.json" >> "$OUT/run.log" 2>&1 || status=1
fi
stamp "noarch tests, every CUDA call on Triton"
RELU_TEST_TARGETS=cuda RELU_TEST_NOARCH_PATH=triton RELU_NOARCH_TESTS="tests/test_views.py tests/test_eager_path.py" \
  timeout 40 scripts/test_noarch.sh "${workers[@]}" -q -rfs -p no:cacheprovider >> "$OUT/run.log" 2>&1 || status=1
stamp "train, noarch"
timeout 15 python3 benchmarks/studies/training_step.py --device cuda --kernel $new_noarch \
  --baseline .cache/noarch-main/build/torch-cuda --shapes 4096x768 --dtypes bfloat16 --workloads activation \
  --repeats 7 --out "$OUT/training_noarch.json" >> "$OUT/run.log" 2>&1 || status=1
stamp "done"
grep -E "passed|failed|rror|^==|kernel/plain|plain/kernel" "$OUT/run.log" | tail -30
exit $status
