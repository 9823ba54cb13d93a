"""Builds of the package side by side in one process, torch's own ops as the yardstick: a new
build against an old one (GPU time new / old at every point), or one build against torch alone
(the noarch fallback's GPU and host time).

    python benchmarks/compare.py --build new=build/<variant> --build old=<other>/build/<variant> \
        --device cuda --out DIR                   # -> DIR/compare_<device>.json
    python benchmarks/compare.py --build noarch=.cache/noarch/build/torch-cuda --device cuda --out DIR

Peers, like with like, each build's and torch's on the same tensors, eager, no grad:
  allocating  <build> relu(x)          against torch.relu(x)
  out=        <build> relu(x, out=o)   against torch.clamp_min(x, 0, out=o) and o.copy_(x)
Parts:
  gpu   (CUDA) GPU time per call from CUDA-graph replay, one buffer pair (hot; --modes cold:
        pairs rotated past 1.5x the L2 too), 4 KiB .. 1 GiB in powers of two, float32,
        bfloat16, float16 and int8 (--quick: powers of 16, float32 and int8).
  host  host time per call (a loop of calls, one synchronize), float32 at 4 KiB .. 1 MiB:
        what a Python caller pays, dispatch included.
Every peer is checked against the definition (NaN-free input) before it is timed; peers are
interleaved (A B C C B A ...), each figure the median of the repeats (benchmarks/timing.py).
Printed: per point, torch's time over each build's (> 1: the build is faster) and each build's
time over the first build's (new / old).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import (  # noqa: E402
    KiB, MiB, GraphSampler, cold_sets, fmt_size, interleaved, last_level_cache_bytes, load_build, medians,
    random_tensor, relu_reference, run_meta, timed_us, write_results,
)

GPU_DTYPES = ("float32", "bfloat16", "float16", "int8")
HOST_SIZES = (4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB)
TORCH_PEER = {"relu(x)": "torch.relu(x)", "relu(x, out=o)": "clamp_min(x, 0, out=o)"}


def peers_of(builds: dict) -> dict:
    """{peer: make(x, o) -> a call of no arguments}, each checked once where it is made."""
    peers = {"torch.relu(x)": lambda x, o: lambda: torch.relu(x),
             "clamp_min(x, 0, out=o)": lambda x, o: lambda: torch.clamp_min(x, 0, out=o),
             "o.copy_(x)": lambda x, o: lambda: o.copy_(x)}
    for name, build in builds.items():
        peers[f"{name} relu(x)"] = lambda x, o, b=build: lambda: b.relu(x)
        peers[f"{name} relu(x, out=o)"] = lambda x, o, b=build: lambda: b.relu(x, out=o)
    return peers


def checked(peers: dict, x: torch.Tensor, o: torch.Tensor) -> dict:
    """The calls on x and o, each checked against the definition first (but the copy)."""
    calls, expected = {name: make(x, o) for name, make in peers.items()}, relu_reference(x)
    for name, fn in calls.items():
        if "copy_" not in name:
            o.fill_(1)
            result = fn()
            assert torch.equal(o if "out=" in name else result, expected), f"{name}: wrong result"
    return calls


def summary(record: dict, builds: list[str]) -> str:
    us, first = record["us"], builds[0]
    parts = [f"{record['dtype']} {fmt_size(record['bytes'])} {record['mode']}:"]
    for form, torch_peer in TORCH_PEER.items():
        parts += [f"{b} {form} {us[f'{b} {form}']:.2f} us (torch/{b} {us[torch_peer] / us[f'{b} {form}']:.3f}"
                  + (f", {b}/{first} {us[f'{b} {form}'] / us[f'{first} {form}']:.3f}" if b != first else "") + ")"
                  for b in builds]
    return "  ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", required=True, metavar="NAME=DIR",
                        help="a build to time (a variant directory, its build/ or a checkout); repeatable, the first "
                             "is the one the others are divided by")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--parts", nargs="+", choices=["gpu", "host"], default=["gpu", "host"])
    parser.add_argument("--modes", nargs="+", choices=["hot", "cold"], default=["hot"], help="gpu part")
    parser.add_argument("--dtypes", nargs="+", choices=GPU_DTYPES, default=None, help="gpu part")
    parser.add_argument("--quick", action="store_true", help="gpu: powers of 16 and two dtypes; 3 repeats")
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 7; quick 3)")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when other processes used more than this share of the "
                             "cores meanwhile (1 turns the check off)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    device, repeats = args.device, args.repeats or (3 if args.quick else 7)
    builds = {}
    for spec in args.build:
        name, _, path = spec.partition("=")
        builds[name] = load_build(Path(path), device)
    assert len({id(b.relu) for b in builds.values()}) == len(builds), "two builds of one namespace share a module"
    out = args.out / f"compare_{device}.json"
    meta = run_meta(device, None, builds={n: s.partition("=")[2] for n, s in zip(builds, args.build)},
                    kernel_ids={n: b._ops.ops.name for n, b in builds.items()}, repeats=repeats)
    records = []
    peers = peers_of(builds)
    with torch.no_grad():
        if "host" in args.parts:
            for size in HOST_SIZES:
                x = random_tensor((size // 4,), torch.float32, device)
                timed = timed_us(checked(peers, x, torch.empty_like(x)), device, "host", repeats, 2000, args.quiet_share)
                records.append(dict(part="host", mode="eager", dtype="float32", bytes=size, **timed))
                print(summary(records[-1], list(builds)), flush=True)
                write_results(out, meta, records)
        if "gpu" in args.parts and device == "cuda":
            l2 = last_level_cache_bytes(device)
            for dtype_name in args.dtypes or (("float32", "int8") if args.quick else GPU_DTYPES):
                dtype = getattr(torch, dtype_name)
                for size in [4 * KiB << i for i in range(0, 19, 4 if args.quick else 1)]:
                    for mode in args.modes:
                        sets = 1 if mode == "hot" else cold_sets(size, l2, 4096)
                        xs = random_tensor((sets, size // dtype.itemsize), dtype, device)
                        os_ = torch.empty_like(xs)
                        checked(peers, xs[0], os_[0])
                        # Graph call i runs on pair i % sets: at least 20 calls (4 from 64 MiB), whole laps.
                        calls = sets * math.ceil((20 if size < 64 * MiB else 4) / sets)
                        samplers = {name: GraphSampler(lambda fn: fn(), [make(xs[i], os_[i]) for i in range(sets)], calls)
                                    for name, make in peers.items()}
                        us = {name: t * 1e6 for name, t in medians(interleaved(samplers, repeats)).items()}
                        del samplers, xs, os_
                        records.append(dict(part="gpu", mode=mode, dtype=dtype_name, bytes=size, sets=sets, us=us))
                        print(summary(records[-1], list(builds)), flush=True)
                        write_results(out, meta, records)
                    if size >= 256 * MiB:
                        torch.cuda.empty_cache()
    print(f"-> {out}")


if __name__ == "__main__":
    main()
