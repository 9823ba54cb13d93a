#!/usr/bin/env bash
# Whether two commits' CUDA kernels are the same instructions: nvcc -ptx of relu-cuda/relu_cuda.cu
# for sm_90 at each, compared after normalizing what depends on the checkout's path (nvcc's
# internal-linkage hashes, branch labels, debug lines). Exit 0: identical.
#   scripts/compare_ptx.sh 612a549 HEAD
#   scripts/compare_ptx.sh --masked-names main HEAD
# --masked-names also masks the mangled names of kernels and device functions and compares the
# sorted kernel bodies, so a rename of a kernel or of a type in its signature reads identical.
set -euo pipefail
cd "$(dirname "$0")/.."
masked=0
if [ "${1:-}" = --masked-names ]; then masked=1; shift; fi
python3 scripts/check_cuda_compile.py --help >/dev/null 2>&1 || true  # fetches .torch-cuda-headers if absent
include=$PWD/.torch-cuda-headers/torch/include
work=$(mktemp -d)
trap 'rm -rf "$work"; git worktree prune' EXIT
python3 -c "import sys; sys.path.insert(0, 'scripts'); from build_variant import REGISTRATION_H; print(REGISTRATION_H)" > "$work/registration.h"
for side in a b; do
  commit=$([ $side = a ] && echo "$1" || echo "$2")
  git worktree add -q --detach "$work/$side" "$commit"
  nvcc -ptx -arch=sm_90 -std=c++20 -O3 -DCUDA_KERNEL -DPy_LIMITED_API=0x03090000 -DTORCH_EXTENSION_NAME=x \
    -DTORCH_TARGET_VERSION=0x020b000000000000 -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ \
    -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ -I"$work/$side" -I"$work" -I"$include" \
    -I"$include/torch/csrc/api/include" -I"$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
    "$work/$side/relu-cuda/relu_cuda.cu" -o "$work/$side.ptx"
  sed -e 's/\$L__BB[0-9_]*/L/g' -e 's/_INTERNAL_[0-9a-f]*_/_INTERNAL_/g' -e 's/__N__[0-9a-f]*_/__N__/g' "$work/$side.ptx" |
    grep -v '^\s*//\|\.file\|\.loc' > "$work/$side.norm"
done
kernels=$(grep -c '^\.visible \.entry' "$work/a.ptx")
if [ $masked = 1 ]; then
  for side in a b; do
    python3 - "$work/$side.norm" <<'PY'
import re, sys
path = sys.argv[1]
text = re.sub(r"_Z[A-Za-z0-9_]*", "_Z", open(path).read())
chunks = re.split(r"^(?=(?:\.visible |\.weak )?\.(?:entry|func) )", text, flags=re.M)
open(path, "w").write(chunks[0] + "".join(sorted(chunks[1:])))
PY
  done
  kernels="$kernels (names masked; b has $(grep -c '^\.visible \.entry' "$work/b.ptx"))"
fi
if cmp -s "$work/a.norm" "$work/b.norm"; then
  echo "identical: $kernels kernels, sm_90 PTX of $1 and $2"
else
  echo "different: $(diff "$work/a.norm" "$work/b.norm" | grep -c '^[<>]') lines"; exit 1
fi
