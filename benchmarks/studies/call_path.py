"""Study. Question: where does a small CPU call's time go, and why does relu(x) cost more
than torch.relu(x) at 4-32 KiB? Answered (PERFORMANCE.md, "Small calls"): the allocating
op's output comes through aoti_torch_empty_strided (torch's dispatcher), and the Python
wrapper adds the Dynamo check, the gradient checks and out='s version bump; the kernel
itself is about 0.1 us. Results: results/cpu-avx2/call_path.json,
results/h200/cpu-avx512/call_path.json, results/h200/cpu-avx512/final/call_path.json.

relu(x) and relu(x, out=o) beside torch.relu(x) and torch.clamp_min(x, 0, out=o), and each
layer of relu()'s path measured alone, on the CPU, in one process, interleaved
(A B C C B A ...), medians of the repeats.

    python benchmarks/studies/call_path.py            # -> results/cpu-<isa>/call_path.json
    python benchmarks/studies/call_path.py --kernel build/<variant> --sizes 1024 8192

Layers: the op's C++ builtin alone (relu.default._op(x): the boxed stable-ABI call, the
checks, the allocation, the kernel), the out= builtin alone (no allocation), the Python
pieces relu() adds (the Dynamo check, the version bump of out=), and torch's own allocation
(torch.empty_like) for scale. At 4 KiB the kernel itself is about 0.1 us of it.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import ROOT, HostSampler, cpu_model, git_revision, interleaved  # noqa: E402


def default_kernel() -> Path:
    return next((ROOT / "build").glob("torch-stable-abi*-cpu-*"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", type=Path, default=None, help="a variant directory (default: build/'s CPU one)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[1024, 8192], help="float32 elements (4 KiB, 32 KiB)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    from kernels import get_local_kernel

    kernel_dir = args.kernel or default_kernel()
    relu_kernel = get_local_kernel(kernel_dir, backend="cpu")
    functions = sys.modules[relu_kernel.relu.__module__]
    ops = functions.ops
    relu_builtin, relu_out_builtin = ops.relu.default._op, ops.relu_out.default._op
    increment_version = torch._C._increment_version
    is_compiling = torch.compiler.is_dynamo_compiling
    isa = ops.cpu_isa()
    rows = []
    print(f"{cpu_model()}, {isa}, torch {torch.__version__}, {torch.get_num_threads()} threads; us per call")
    for numel in args.sizes:
        x = torch.randn(numel)
        o = torch.empty_like(x)
        peers = {
            "torch.relu(x)": lambda: torch.relu(x),
            "relu(x)": lambda: relu_kernel.relu(x),
            "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o),
            "relu(x, out=o)": lambda: relu_kernel.relu(x, out=o),
            "o.copy_(x)": lambda: o.copy_(x),
            "op builtin: relu(x)": lambda: relu_builtin(x),
            "op builtin: relu_out(o, x)": lambda: relu_out_builtin(o, x),
            "torch.empty_like(x)": lambda: torch.empty_like(x),
            "is_dynamo_compiling()": lambda: is_compiling(),
            "version bump of out": lambda: increment_version((o,)),
        }
        for fn in peers.values():
            fn()
        samples = interleaved({k: HostSampler(fn, calls=args.calls) for k, fn in peers.items()}, args.repeats)
        us = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
        rows.append(dict(numel=numel, bytes=numel * 4, us=us))
        print(f"float32 x {numel} ({numel * 4 // 1024} KiB):")
        for k, v in us.items():
            print(f"  {k:28} {v:6.3f}")
        print(f"  relu(x) / torch.relu(x) {us['relu(x)'] / us['torch.relu(x)']:.2f}x, "
              f"relu(x, out=o) / clamp_min(out=) {us['relu(x, out=o)'] / us['clamp_min(x, 0, out=o)']:.2f}x, "
              f"relu(x, out=o) / torch.relu(x) {us['relu(x, out=o)'] / us['torch.relu(x)']:.2f}x")
    meta = dict(command="python benchmarks/studies/call_path.py " + " ".join(sys.argv[1:]), cpu=cpu_model(), isa=isa,
                threads=torch.get_num_threads(), torch=torch.__version__, git=git_revision(),
                kernel=kernel_dir.name, loadavg=os.getloadavg(),
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    out = args.out or ROOT / "results" / f"cpu-{isa}" / "call_path.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    print(f"-> {out}")


if __name__ == "__main__":
    main()
