#!/usr/bin/env bash
# The L2-band study on the lent H200 (device tool), one call. On the dev machine first:
#   nvcc -O3 -std=c++17 -arch=sm_90 -cudart static -Xcompiler -fPIC -shared -I. \
#       -I"$(python -c 'import torch, os; print(os.path.dirname(torch.__file__))')/include" \
#       benchmarks/studies/l2_band/band_kernels.cu -o .l2/libband.so
#   and a build of the product in .l2/product/<variant> (scripts/build_variant.py --backend cuda
#   --cuda-archs 9.0 --build-dir .l2/product); carry .l2.
# Writes $OUT/band.json, band.md (band.py), ncu_cold.csv, ncu_hot.csv, ncu.err (Nsight Compute, clocks
# left alone), triton_sass.txt (the Triton peers as compiled there), device.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/band}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
variant=$(ls -d .l2/product/*cu130*)
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  sha256sum .l2/libband.so "$variant"/*.so; } > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
study="benchmarks/studies/l2_band/band.py --library .l2/libband.so --variant-dir $variant"
python3 $study --out "$OUT" --time-limit-s "${BAND_TIME_S:-280}" ${BAND_ARGS:-} 2>&1 | tail -3
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
metrics=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_active.avg,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warps_launched.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__grid_size,launch__block_size,launch__registers_per_thread,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
entries=("o.copy_(x)" "triton B1024 w4" "triton B2048 w8" "triton B4096 w4" "relu(x, out=o)" "tile t256 v1" "tile t128 v2" "tile t128 v4" "product t256 v1" "product t128 v2" "empty")
if [ -n "$ncu" ]; then
  timeout 90 "$ncu" --clock-control none --cache-control all --profile-from-start off --csv --page raw \
    --metrics $metrics python3 $study --ncu --sizes 262144 1048576 2097152 --dtypes float32 bfloat16 \
    --entries "${entries[@]}" > "$OUT/ncu_cold.csv" 2> "$OUT/ncu.err"
  echo "ncu cold: $? $(wc -l < "$OUT/ncu_cold.csv") lines"
  timeout 60 "$ncu" --clock-control none --cache-control none --profile-from-start off --csv --page raw \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.max,lts__t_sector_hit_rate.pct,smsp__warps_launched.sum \
    python3 $study --ncu --sizes 2097152 8388608 --dtypes float32 bfloat16 \
    --entries "${entries[@]}" > "$OUT/ncu_hot.csv" 2>> "$OUT/ncu.err"
  echo "ncu hot: $? $(wc -l < "$OUT/ncu_hot.csv") lines"
else
  echo "no ncu on this machine"
fi
for cubin in ~/.triton/cache/*/*.cubin; do echo "== $cubin"; cuobjdump -sass "$cubin" | grep -E "^\s+/\*[0-9a-f]{4}\*/" | head -40; done > "$OUT/triton_sass.txt" 2>&1
python3 benchmarks/studies/l2_band/band.py --table "$OUT/band.json" | head -150
