"""relu on views that are not one dense block, against torch like for like: views of one
source tensor, float32, bfloat16 and int8, on the device it runs on.

    python benchmarks/views.py                     # CPU, 2048 x 8192 source (a few minutes on 2 cores)
    python benchmarks/views.py --device cuda       # one GPU, 8192 x 16384 source
    python benchmarks/views.py --quick             # smoke run: small source, 3 repeats, short samples
    python benchmarks/views.py --source 4096x8192 --dtypes float32 --views chunk chunk-t

Views of the source s (ROWS x COLS, --source; COLS a multiple of 64):
  contiguous        s itself: the control, where both sides of every pair walk dense memory
  chunk             s[:, :COLS/2]                   (x.chunk(2, dim=-1)[0])
  cols-step2        s[:, ::2]
  chunk-t           s[:, :COLS/2].t()
  slice3d-permuted  s.view(ROWS, 64, COLS/64)[:, 1:, :3/4 COLS/64].permute(2, 0, 1)
  cols-from1-step3  s[..., 1::3]
Pairs, each on the same x:
  allocating: relu(x) ["relu"] against torch.relu(x) ["torch.relu"];
  out=:       relu(x, out=o) ["relu_out"] against torch.clamp_min(x, 0, out=o) ["clamp_min_out"],
              o = torch.empty_like(torch.relu(x)), one tensor for both (dense, x's stride order).
Timing: benchmarks/timing.py's samplers. CPU: host-timed loops, "hot" (one source) and "cold"
(sources rotated, the views' bytes past 1.5x the last-level cache); each point waits for a
quiet machine and is measured again when other processes took more than --quiet-share of the
cores. CUDA: GPU time per call from replaying a CUDA graph of many calls, hot and cold. Peers
are interleaved (A B C D D C B A ...), each time the median of --repeats samples. Every peer's
output is checked against the reference once before it is timed; one that fails is recorded
with its error and not timed.
Results: <out>/views.json (default results/<device>/views/), rewritten after every point:
the machine (CPU model and the kernel's ISA, or the GPU; torch), the command, and one record
per view, dtype, form, peer and mode with its time in us. GB/s counts x's elements read once
and the result written once (a strided view touches more memory than that). Printed: a
markdown table of ratios, peer time / ours (> 1: ours is faster), per view x dtype x form.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep import Peer, check_peer  # noqa: E402
from timing import (  # noqa: E402
    ROOT, Buffers, GraphSampler, HostSampler, MachineLoad, Rotation, cold_sets, device_label, interleaved,
    last_level_cache_bytes, load_build, measure_when_quiet, random_fill, run_meta, write_results,
)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "int8": torch.int8}
DEFAULT_SOURCE = {"cpu": (2048, 8192), "cuda": (8192, 16384)}
QUICK_SOURCE = {"cpu": (256, 2048), "cuda": (2048, 4096)}


def views(rows: int, cols: int) -> dict:
    return {
        "contiguous": lambda s: s,
        "chunk": lambda s: s[:, : cols // 2],
        "cols-step2": lambda s: s[:, ::2],
        "chunk-t": lambda s: s[:, : cols // 2].t(),
        "slice3d-permuted": lambda s: s.view(rows, 64, cols // 64)[:, 1:, : cols // 64 * 3 // 4].permute(2, 0, 1),
        "cols-from1-step3": lambda s: s[..., 1::3],
    }


VIEW_NAMES = list(views(64, 64))


def peers(kernel) -> list[Peer]:
    relu = kernel.relu
    return [
        Peer("relu", lambda b: relu(b["x"]), None, "relu"),
        Peer("torch.relu", lambda b: torch.relu(b["x"]), None, "relu"),
        Peer("relu_out", lambda b: relu(b["x"], out=b["o"]), "o", "relu"),
        Peer("clamp_min_out", lambda b: torch.clamp_min(b["x"], 0, out=b["o"]), "o", "relu"),
    ]


def run_point(kernel, device: str, view: str, dtype_name: str, cache_bytes: int, args) -> list[dict]:
    dtype = DTYPES[dtype_name]
    make = views(*args.source)[view]
    probe = make(torch.empty(args.source, dtype=dtype, device="meta"))
    x_bytes = probe.numel() * dtype.itemsize
    # Cold: sources rotated so that the views' bytes alone exceed 1.5x the cache; out= forms
    # rotate o as well, allocating forms write the allocator's block (as in sweep.py).
    sets = cold_sets(x_bytes, cache_bytes, args.max_cold_sets)
    buffers = Buffers(["s"], sets, args.source, dtype, device)
    random_fill(buffers.sets[0]["s"])  # NaN-free: torch keeps NaN, relu gives 0
    buffers.pools["s"][1:] = buffers.pools["s"][0]
    for one in buffers.sets:
        one["x"] = make(one["s"])
        # Written once here: otherwise the first out= peer timed pays every set's first-touch
        # page faults (on the CPU, 2.5x its cold time in a --quick run).
        one["o"] = torch.empty_like(torch.relu(one["x"])).zero_()
    base = dict(view=view, dtype=dtype_name, shape=list(probe.shape), strides=list(probe.stride()),
                bytes=x_bytes, sets=sets)
    records, good = [], []
    for peer in peers(kernel):
        try:
            check_peer(peer, dict(buffers.sets[0]))
            good.append(peer)
        except Exception as exc:
            records.append(dict(base, peer=peer.name, form=peer.form, error=f"{type(exc).__name__}: {exc}"))

    def emit(mode: str, samplers: dict) -> None:
        for name, values in interleaved(samplers, args.repeats).items():
            us = statistics.median(values) * 1e6
            form = next(p.form for p in good if p.name == name)
            records.append(dict(base, peer=name, form=form, mode=mode, us=us, gbps=2 * x_bytes / us * 1e-3,
                                samples_us=[round(v * 1e6, 3) for v in values],
                                calls_per_sample=samplers[name].calls))

    for mode, rotate in (("hot", False), ("cold", True)):
        samplers = {}
        rotation = Rotation(buffers.sets) if rotate else None  # shared by the mode's peers
        for peer in good:
            host = HostSampler(peer.call, rotation or buffers.sets[:1], device)
            estimate = host.calibrate(args.min_sample_ms * 1e-3)
            if device == "cpu":
                samplers[peer.name] = host
            else:
                calls = max(args.min_graph_calls, min(2000, math.ceil(args.min_graph_ms * 1e-3 / max(estimate, 1e-6))))
                calls = sets * math.ceil(calls / sets) if rotate else calls  # every set once per lap
                samplers[peer.name] = GraphSampler(peer.call, buffers.sets if rotate else buffers.sets[:1], calls)
        emit(mode, samplers)
        del samplers
    del buffers
    if device == "cuda":
        torch.cuda.empty_cache()
    return records


def ratio_table(records: list[dict]) -> str:
    times = {(r["view"], r["dtype"], r["mode"], r["peer"]): r["us"] for r in records if "us" in r}
    lines = []
    for mode in ("hot", "cold"):
        lines += [f"\n**{mode}**: ratio = peer time / ours (> 1: ours is faster)\n",
                  "| view | dtype | relu(x) us | torch.relu(x) / relu(x) | relu(x, out=o) us | "
                  "clamp_min(x, 0, out=o) / relu(x, out=o) |",
                  "|---|---|---|---|---|---|"]
        for view, dtype in dict.fromkeys((r["view"], r["dtype"]) for r in records):
            t = lambda peer: times.get((view, dtype, mode, peer))  # noqa: E731
            cells = []
            for ours, peer in (("relu", "torch.relu"), ("relu_out", "clamp_min_out")):
                cells.append(f"{t(ours):.1f}" if t(ours) else "-")
                cells.append(f"{t(peer) / t(ours):.2f}x" if t(ours) and t(peer) else "-")
            lines.append(f"| {view} | {dtype} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_source(text: str) -> tuple[int, int]:
    rows, _, cols = text.lower().partition("x")
    if not (rows.isdigit() and cols.isdigit()) or int(cols) % 64:
        raise argparse.ArgumentTypeError(f"--source {text!r}: ROWSxCOLS, COLS a multiple of 64, e.g. 2048x8192")
    return int(rows), int(cols)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--source", type=parse_source, default=None,
                        help="ROWSxCOLS of the source (default CPU 2048x8192, CUDA 8192x16384)")
    parser.add_argument("--quick", action="store_true", help="smoke run: small source, 3 repeats, short samples")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES))
    parser.add_argument("--views", nargs="+", choices=VIEW_NAMES, default=VIEW_NAMES)
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 7, quick 3)")
    parser.add_argument("--min-sample-ms", type=float, default=None, help="host-timed sample (default CPU 10, CUDA 2; quick 2)")
    parser.add_argument("--min-graph-ms", type=float, default=0.2, help="CUDA: GPU time per graph replay at least")
    parser.add_argument("--min-graph-calls", type=int, default=20)
    parser.add_argument("--max-cold-sets", type=int, default=256)
    parser.add_argument("--threads", type=int, default=None, help="CPU: torch.set_num_threads")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when others used more than this share of the cores")
    parser.add_argument("--quiet-wait-s", type=float, default=20.0, help="CPU: wait this long at most for quiet")
    parser.add_argument("--retries", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="directory for views.json")
    parser.add_argument("--kernel", type=Path, default=ROOT,
                        help="a checkout, its build/ or one variant directory (default: this checkout)")
    args = parser.parse_args()
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    args.source = args.source or (QUICK_SOURCE if args.quick else DEFAULT_SOURCE)[device]
    args.repeats = args.repeats or (3 if args.quick else 7)
    args.min_sample_ms = args.min_sample_ms or (2.0 if args.quick or device == "cuda" else 10.0)
    if args.threads:
        torch.set_num_threads(args.threads)
    kernel = load_build(args.kernel, device)
    cache_bytes = last_level_cache_bytes(device)
    out_file = (args.out or ROOT / "results" / device_label(device) / "views") / "views.json"
    meta = run_meta(device, kernel, cache_bytes=cache_bytes, source=list(args.source), repeats=args.repeats)
    records: list[dict] = []
    load = MachineLoad(args.quiet_share) if device == "cpu" and args.quiet_share < 1 else None
    started = time.time()
    for view in args.views:
        for dtype_name in args.dtypes:
            print(f"{view} {dtype_name} ...", file=sys.stderr, flush=True)
            records += measure_when_quiet(lambda: run_point(kernel, device, view, dtype_name, cache_bytes, args),
                                          load, args.retries, args.quiet_wait_s)
            write_results(out_file, meta, records)
    meta["seconds"] = round(time.time() - started, 1)
    write_results(out_file, meta, records)
    for r in records:
        if "error" in r:
            print(f"  {r['view']} {r['dtype']} {r['peer']}: {r['error']}", file=sys.stderr)
    print(f"# relu on views of a {'x'.join(map(str, args.source))} source, {meta['machine']}, torch {torch.__version__}"
          f"\n\n`{meta['command']}` -> {out_file}")
    print(ratio_table(records))


if __name__ == "__main__":
    main()
