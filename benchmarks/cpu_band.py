"""Why the CPU kernel trails torch in the L2/L3 band, measured: the shipped loop of
relu-cpu/relu_cpu.cpp compiled in variants, beside torch.clamp_min(x, 0, out=o) and
o.copy_(x) on the same hot buffer pair, in one process, interleaved (A B C C B A ...),
medians of the repeats.

    python benchmarks/cpu_band.py                    # -> results/cpu-<isa>/band.json + tables
    RELU_CPU_ISA=avx2 python benchmarks/cpu_band.py  # the AVX2 loop on an AVX-512 machine

What varies, one knob at a time:
  - the vector loop: RELU_CPU_UNROLL = 1, 2, 4 (vectors per loop trip), each with the
    shipped split (kSplitBytes, kTaskBytes);
  - the split: the unroll picked by --unroll, split from 2 tasks' worth in tasks of 64, 128
    and 256 KiB ("task N KiB"), and with no split at all ("serial");
  - the threads: every peer with torch's intra-op pool at 1 thread and at its default, so the
    loop alone (1 thread) is told apart from the split (default).
Each variant is the package's own source built into a small extension (load_inline), so what
is measured is the shipped loop, not a copy of it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep import CallSampler, cpu_model, git_revision, interleaved  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KiB, MiB = 1024, 1024**2
NEVER_SPLIT = 1 << 62

SOURCE = r"""
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "relu-cpu/relu_cpu.cpp"

namespace {
void relu_study(at::Tensor& out, const at::Tensor& x, int64_t split_bytes, int64_t task_bytes) {
  relu_flat_cpu_with_split(static_cast<relu_kernel::ScalarType>(x.scalar_type()),
                           x.const_data_ptr(), out.mutable_data_ptr(), x.numel(), split_bytes,
                           task_bytes);
}
std::string isa() { return relu_cpu_isa(); }
}  // namespace

TORCH_LIBRARY(NAMESPACE, m) {
  m.def("relu(Tensor(a!) out, Tensor x, int split_bytes, int task_bytes) -> ()");
  m.def("isa() -> str", &isa);
}
TORCH_LIBRARY_IMPL(NAMESPACE, CPU, m) { m.impl("relu", &relu_study); }
"""


def build(unroll: int):
    name = f"relu_band_unroll{unroll}"
    load_inline(name=name, cpp_sources=[SOURCE.replace("NAMESPACE", name)],
                extra_cflags=["-O3", "-std=c++20", "-DCPU_KERNEL", f"-DRELU_CPU_UNROLL={unroll}"],
                extra_include_paths=[str(ROOT)], no_implicit_headers=True, is_python_module=False)
    return getattr(torch.ops, name)


def shipped_bytes(name: str) -> int:
    """A constant of relu_cpu.cpp, e.g. kSplitBytes = 256 * 1024."""
    text = (ROOT / "relu-cpu" / "relu_cpu.cpp").read_text()
    line = next(l for l in text.splitlines() if l.startswith(f"constexpr int64_t {name} "))
    factors = line.split("=", 1)[1].strip().rstrip(";").split("*")
    product = 1
    for factor in factors:
        product *= int(factor)
    return product


def measure(peers: dict, repeats: int, sample_s: float) -> dict[str, float]:
    """Median microseconds per call of each peer, interleaved, each sample about sample_s."""
    samplers = {k: CallSampler(fn, 10) for k, fn in peers.items()}
    for sampler in samplers.values():
        sampler.fn()
        sampler.calls = max(1, int(sample_s / sampler.sample()))
    return {k: statistics.median(v) * 1e6 for k, v in interleaved(samplers, repeats).items()}


def random_tensor(numel: int, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(numel).to(dtype)
    return torch.randint(-100, 100, (numel,), dtype=dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16", "int8"])
    parser.add_argument("--sizes-kib", nargs="+", type=int, default=[32 * 2**i for i in range(10)])  # 32 KiB .. 16 MiB
    parser.add_argument("--unrolls", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--unroll", type=int, default=None, help="the loop the task-size study uses (default: the largest)")
    parser.add_argument("--grains-kib", nargs="+", type=int, default=[64, 128, 256])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--sample-ms", type=float, default=3.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    builds = {u: build(u) for u in args.unrolls}
    study_unroll = args.unroll or max(args.unrolls)
    isa = builds[study_unroll].isa()
    out = args.out or ROOT / "results" / f"cpu-{isa}" / "band.json"
    shipped = (shipped_bytes("kSplitBytes"), shipped_bytes("kTaskBytes"))
    default_threads = torch.get_num_threads()
    meta = dict(command="python benchmarks/cpu_band.py " + " ".join(sys.argv[1:]), cpu=cpu_model(), isa=isa,
                threads_default=default_threads, torch=torch.__version__, git=git_revision(),
                shipped_split_bytes=shipped[0], shipped_task_bytes=shipped[1], study_unroll=study_unroll, loadavg_start=os.getloadavg(),
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    print(f"{meta['cpu']}, {isa}, torch {torch.__version__}, threads 1 and {default_threads}; "
          f"us per call, medians of {args.repeats}")
    rows = []
    for threads in sorted({1, default_threads}):
        torch.set_num_threads(threads)
        for name in args.dtypes:
            dtype = getattr(torch, name)
            for kib in args.sizes_kib:
                x = random_tensor(kib * KiB // dtype.itemsize, dtype)
                o = torch.empty_like(x)
                expected = torch.where(x > 0, x, torch.zeros((), dtype=dtype))
                peers = {f"unroll{u}": (lambda op=op: op.relu(o, x, *shipped)) for u, op in builds.items()}
                study = builds[study_unroll]
                if threads > 1:
                    peers |= {f"unroll{study_unroll} task {g} KiB": (lambda g=g: study.relu(o, x, 2 * g * KiB, g * KiB))
                              for g in args.grains_kib}
                    peers[f"unroll{study_unroll} serial"] = lambda: study.relu(o, x, NEVER_SPLIT, NEVER_SPLIT)
                peers["clamp_min(out=)"] = lambda: torch.clamp_min(x, 0, out=o)
                peers["copy_"] = lambda: o.copy_(x)
                for label, fn in peers.items():
                    if label == "copy_":
                        continue
                    o.fill_(7)
                    fn()
                    if not torch.equal(o, expected):
                        raise SystemExit(f"{label} gave a wrong result for {name} {kib} KiB")
                times = measure(peers, args.repeats, args.sample_ms * 1e-3)
                rows.append(dict(threads=threads, dtype=name, bytes=kib * KiB, us=times))
                ratios = "  ".join(f"{k} {v:.2f}" for k, v in times.items())
                print(f"threads {threads} {name:9} {kib:>6} KiB  {ratios}", flush=True)
    meta["loadavg_end"] = os.getloadavg()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    print(f"-> {out}")


if __name__ == "__main__":
    main()
