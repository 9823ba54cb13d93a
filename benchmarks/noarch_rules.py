"""Which torch op the noarch variants run per float dtype (torch-ext/relu/_noarch.py): every
candidate rule for relu, checked bit for bit against the definition (x > 0 ? x : 0, on data
with NaN, +-inf, +-0.0) on the device, then timed in the out= form against torch.clamp_min(x,
0, out=o), the op torch.relu runs (which keeps NaN: the yardstick, not a candidate).

    python benchmarks/noarch_rules.py --device cpu --out DIR     # -> DIR/noarch_rules_<device>.json

Host time per call (a loop of calls, one synchronize); CUDA: also GPU time from CUDA-graph
replay. Interleaved, medians of the repeats (benchmarks/timing.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import KiB, MiB, fmt_size, random_tensor, run_meta, timed_us, write_results  # noqa: E402

INF = float("inf")


def candidates(device: str, dtype: torch.dtype) -> dict:
    cpu_zero, zero = torch.zeros((), dtype=dtype), torch.zeros((), dtype=dtype, device=device)
    return {
        "threshold, nan_to_num_": lambda x, o: torch.threshold(x, 0, 0, out=o).nan_to_num_(0.0, INF),
        "fmax(x, 0)": lambda x, o: torch.fmax(x, cpu_zero, out=o),
        "where(x > 0, x, 0)": lambda x, o: torch.where(x > 0, x, zero, out=o),
        "clamp_min, nan_to_num_, + 0.0": lambda x, o: torch.clamp_min(x, 0, out=o).nan_to_num_(0.0, INF).add_(zero),
        "clamp_min(out=) [yardstick]": lambda x, o: torch.clamp_min(x, 0, out=o),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when others used more than this share of the cores")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    device = args.device
    out, records = args.out / f"noarch_rules_{device}.json", []
    meta = run_meta(device, None, repeats=args.repeats)
    sizes = (4 * KiB, 256 * KiB, 4 * MiB) + ((64 * MiB,) if device == "cuda" else ())
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        special = torch.tensor([float("nan"), -float("nan"), INF, -INF, 0.0, -0.0, 1e-40, -1e-40, 2.0, -2.0])
        x = special.to(dtype).to(device)
        expected = torch.where(x > 0, x, torch.zeros_like(x)).view(torch.int8)
        exact = {}
        for name, rule in candidates(device, dtype).items():
            o = torch.empty_like(x)
            rule(x, o)
            exact[name] = torch.equal(o.view(torch.int8), expected)
        for size in sizes:
            x = random_tensor((size // dtype.itemsize,), dtype, device)
            o = torch.empty_like(x)
            calls = {name: (lambda r=rule: r(x, o)) for name, rule in candidates(device, dtype).items()}
            for kind in ("host", "gpu") if device == "cuda" else ("host",):
                timed = timed_us(calls, device, kind, args.repeats, 20 if kind == "gpu" else max(3, 2000 * KiB // size),
                                 args.quiet_share)
                us = timed["us"]
                records.append(dict(dtype=str(dtype).removeprefix("torch."), bytes=size, timing=kind, exact=exact, **timed))
                print(f"{records[-1]['dtype']:9s} {fmt_size(size):8s} {kind}: " + "  ".join(
                    f"{n}{'' if exact[n] else ' (inexact)'} {t:.2f}" for n, t in us.items()), flush=True)
                write_results(out, meta, records)
    print(f"-> {out}")


if __name__ == "__main__":
    main()
