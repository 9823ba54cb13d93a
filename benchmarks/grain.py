"""Measures from which tensor size splitting the work over the intra-op pool beats running it
on the calling thread (kSplitBytes in relu-cpu/relu_cpu.cpp; benchmarks/cpu_band.py measures
the task size beside it).

    python benchmarks/grain.py            # -> results/cpu/grain.json and a table

It compiles relu-cpu/relu_cpu.cpp itself into a small extension (load_inline) whose op takes
the grain as an argument, so the loop measured is the shipped one, at any grain, without
rebuilding the package. For each size it times, interleaved (A B B A ...), the serial run
(grain larger than the tensor) and the split run (grain of one element: one task per
thread), on one hot buffer pair (small tensors live in cache in real use too). It prints the
median and the minimum of the samples: the minimum is the cost when both cores are free (on a
shared machine another busy process makes every split run wait a scheduler time slice, which
the median shows).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

ROOT = Path(__file__).resolve().parent.parent
KiB, MiB = 1024, 1024**2
NEVER_SPLIT = 1 << 62

SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "relu-cpu/relu_cpu.cpp"

namespace {
void relu_grain(at::Tensor& out, const at::Tensor& x, int64_t grain_bytes) {
  // Split from one grain, in tasks of one grain.
  relu_flat_cpu_with_split(static_cast<relu_kernel::ScalarType>(x.scalar_type()), x.const_data_ptr(),
                           out.mutable_data_ptr(), x.numel(), grain_bytes, grain_bytes);
}
}  // namespace

TORCH_LIBRARY(relu_grain_study, m) {
  m.def("relu_grain(Tensor(a!) out, Tensor x, int grain_bytes) -> ()");
}
TORCH_LIBRARY_IMPL(relu_grain_study, CPU, m) { m.impl("relu_grain", &relu_grain); }
"""


def per_call(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtypes", nargs="+", default=["float32", "int8"])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--sample-ms", type=float, default=2.0)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "cpu" / "grain.json")
    args = parser.parse_args()

    load_inline(name="relu_grain_study", cpp_sources=[SOURCE], extra_cflags=["-O3", "-std=c++20", "-DCPU_KERNEL"],
                extra_include_paths=[str(ROOT)], no_implicit_headers=True, is_python_module=False)
    op = torch.ops.relu_grain_study.relu_grain
    sizes = [16 * KiB * 2**i for i in range(10)]  # 16 KiB .. 8 MiB
    rows = []
    loadavg_start = os.getloadavg()
    print(f"threads {torch.get_num_threads()}, load average {loadavg_start[0]:.1f}")
    print(f"{'dtype':9} {'size':>8} {'serial us':>10} {'split us':>10} {'speedup':>8}   "
          f"{'min serial':>10} {'min split':>10} {'speedup':>8}")
    for name in args.dtypes:
        dtype = getattr(torch, name)
        for nbytes in sizes:
            numel = nbytes // dtype.itemsize
            x = torch.randn(numel).to(dtype) if dtype.is_floating_point else torch.randint(-128, 128, (numel,), dtype=dtype)
            out = torch.empty_like(x)
            variants = {"serial": lambda: op(out, x, NEVER_SPLIT), "split": lambda: op(out, x, 1)}
            for fn in variants.values():
                fn()
            calls = max(1, int(args.sample_ms * 1e-3 / per_call(variants["serial"], 20)))
            samples = {k: [] for k in variants}
            for r in range(args.repeats):
                for k in (variants if r % 2 == 0 else reversed(list(variants))):
                    samples[k].append(per_call(variants[k], calls))
            serial = statistics.median(samples["serial"]) * 1e6
            split = statistics.median(samples["split"]) * 1e6
            serial_min, split_min = min(samples["serial"]) * 1e6, min(samples["split"]) * 1e6
            rows.append(dict(dtype=name, bytes=nbytes, serial_us=serial, split_us=split,
                             serial_min_us=serial_min, split_min_us=split_min,
                             serial_samples_us=[s * 1e6 for s in samples["serial"]],
                             split_samples_us=[s * 1e6 for s in samples["split"]], calls_per_sample=calls))
            print(f"{name:9} {nbytes // KiB:>6}Ki {serial:>10.2f} {split:>10.2f} {serial / split:>7.2f}x   "
                  f"{serial_min:>10.2f} {split_min:>10.2f} {serial_min / split_min:>7.2f}x")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(command="python benchmarks/grain.py " + " ".join(sys.argv[1:]), threads=torch.get_num_threads(),
                loadavg_start=loadavg_start,
                torch=torch.__version__, loadavg_end=os.getloadavg(),
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
                isa=os.environ.get("RELU_CPU_ISA", "best"))
    args.out.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
