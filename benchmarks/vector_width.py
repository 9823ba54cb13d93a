"""Measures the vector width of the CPU kernel's AVX-512 variant (RELU_AVX512_VECTOR_BITS in
relu-cpu/relu_cpu.cpp): 256-bit against 512-bit vectors, with torch's clamp_min(out=) and
copy_ beside them, one and two threads, hot buffers (the sizes where the loop, not DRAM,
decides), interleaved, medians.

    python benchmarks/vector_width.py      # -> results/cpu/vector_width.json and a table

It compiles relu-cpu/relu_cpu.cpp twice into small extensions (load_inline), once per width,
so the loops measured are the shipped ones. Needs an AVX-512 CPU.
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import time
from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "cpu" / "vector_width.json"
KiB, MiB = 1024, 1024**2

SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "relu-cpu/relu_cpu.cpp"

namespace {
void relu_width(at::Tensor& out, const at::Tensor& x) {
  relu_flat_cpu(static_cast<relu_kernel::ScalarType>(x.scalar_type()), x.const_data_ptr(),
                out.mutable_data_ptr(), x.numel());
}
std::string isa() { return relu_cpu_isa(); }
}  // namespace

TORCH_LIBRARY(NAMESPACE, m) {
  m.def("relu(Tensor(a!) out, Tensor x) -> ()");
  m.def("isa() -> str", &isa);
}
TORCH_LIBRARY_IMPL(NAMESPACE, CPU, m) { m.impl("relu", &relu_width); }
"""


def build(bits: int):
    name = f"relu_width_{bits}"
    load_inline(name=name, cpp_sources=[SOURCE.replace("NAMESPACE", name)],
                extra_cflags=["-O3", "-std=c++20", "-DCPU_KERNEL", f'-DRELU_AVX512_VECTOR_BITS=\\"{bits}\\"'],
                extra_include_paths=[str(ROOT)], no_implicit_headers=True, is_python_module=False)
    return getattr(torch.ops, name)


def per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    builds = {bits: build(bits) for bits in (256, 512)}
    if builds[512].isa() != "avx512":
        raise SystemExit(f"this CPU runs the {builds[512].isa()} variant: nothing to compare")
    rows = []
    print(f"load average {os.getloadavg()[0]:.1f}; us per call, medians of 15 interleaved samples")
    print(f"{'threads':>7} {'dtype':8} {'size':>7} {'256-bit':>8} {'512-bit':>8} {'clamp_min':>9} {'copy_':>8}")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for dtype in (torch.float32, torch.bfloat16, torch.int8):
            for nbytes in (1 * MiB, 4 * MiB):
                x = torch.randn(nbytes // dtype.itemsize).to(dtype) if dtype.is_floating_point else \
                    torch.randint(-128, 128, (nbytes,), dtype=dtype)
                out = torch.empty_like(x)
                peers = {"256-bit": lambda: builds[256].relu(out, x), "512-bit": lambda: builds[512].relu(out, x),
                         "clamp_min": lambda: torch.clamp_min(x, 0, out=out), "copy_": lambda: out.copy_(x)}
                for fn in peers.values():
                    fn()
                calls = max(1, int(3e-3 / per_call(peers["copy_"], 10)))
                samples = {k: [] for k in peers}
                for r in range(15):
                    for k in (list(peers) if r % 2 == 0 else list(reversed(peers))):
                        samples[k].append(per_call(peers[k], calls) * 1e6)
                med = {k: statistics.median(v) for k, v in samples.items()}
                rows.append(dict(threads=threads, dtype=str(dtype).removeprefix("torch."), bytes=nbytes,
                                 median_us=med, samples_us=samples))
                print(f"{threads:>7} {rows[-1]['dtype']:8} {nbytes // MiB:>5}Mi " +
                      " ".join(f"{med[k]:>8.2f}" for k in peers))
    meta = dict(command="python benchmarks/vector_width.py", torch=torch.__version__, loadavg_end=os.getloadavg(),
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    print(f"-> {OUT}")


if __name__ == "__main__":
    main()
