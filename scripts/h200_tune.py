"""Times the CUDA kernel's launch choices on the device it runs on, next to its peers, and
writes what launch_policy.h's constants cite (results/h200/tune.json) plus the L2-band
study behind L2_BAND_CLIFF.md (results/h200/l2_band.json).

    python scripts/h200_tune.py --out results/h200/runN [--only tune|l2band]
    python scripts/h200_tune.py --l2band-table results/h200/run3/l2_band.json   (tables only)

Method (the issue's): GPU time per call from CUDA-graph replay (calls per graph, median of
replays, CUDA events); "cold" = input/output pairs rotated so that together they exceed
1.5x the L2 size, "hot" = one pair. Peers in the same run: torch.relu, out.copy_(x), a
plain 16-byte copy kernel (the package's own loop with the ReLU left out), upstream's
one-block-per-row launch, and the package's op itself (if a CUDA build is loadable).
Variants are interleaved per size, so drift hits all alike. GB/s counts bytes read + written.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int8": torch.int8}


def build_tune_extension():
    from torch.utils.cpp_extension import load

    major, minor = torch.cuda.get_device_capability()
    build_dir = ROOT / ".cache" / "tune-ext"
    build_dir.mkdir(parents=True, exist_ok=True)
    return load(
        name="relu_tune",
        sources=[str(ROOT / "scripts" / "h200_tune_kernels.cu")],
        extra_include_paths=[str(ROOT)],
        extra_cuda_cflags=["-O3", "-DCUDA_KERNEL", f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"],
        extra_cflags=["-O3", "-DCUDA_KERNEL"],
        build_directory=str(build_dir),
        verbose=False,
    )


def load_package_kernel():
    try:
        from kernels import get_local_kernel

        return get_local_kernel(ROOT, backend="cuda")
    except Exception as error:  # the tuning does not need it; say why it is missing
        print(f"(package kernel not loaded: {error})", file=sys.stderr)
        return None


class Buffers:
    """`pairs` input/output pairs of `nbytes` each, carved from two slabs (256-byte aligned)."""

    def __init__(self, nbytes: int, dtype: torch.dtype, pairs: int):
        elem = torch.empty((), dtype=dtype).element_size()
        self.n = nbytes // elem
        stride = (self.n + 255) // 256 * 256
        total = stride * pairs
        if dtype.is_floating_point:
            self.x_slab = torch.randn(total, device="cuda", dtype=torch.float32).to(dtype)
        else:
            self.x_slab = torch.randint(-128, 127, (total,), device="cuda", dtype=torch.int8).to(dtype)
        self.out_slab = torch.empty_like(self.x_slab)
        self.x = [self.x_slab[i * stride : i * stride + self.n] for i in range(pairs)]
        self.out = [self.out_slab[i * stride : i * stride + self.n] for i in range(pairs)]


def cold_pairs(nbytes: int, l2_bytes: int) -> int:
    return max(2, math.ceil(1.5 * l2_bytes / (2 * nbytes)) + 1)


def graph_time_us(launch, pairs: int, calls: int, replays: int = 7, keep_outputs: bool = True) -> float:
    """Median GPU time per call of `launch(i)` (i = pair index), from CUDA-graph replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(min(pairs, 3)):
            launch(i)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    keep = []  # allocating peers: each call's output stays live, so each gets its own block
    with torch.cuda.graph(graph):
        for c in range(calls):
            result = launch(c % pairs)
            if keep_outputs:
                keep.append(result)
    graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / calls)
    del graph, keep
    return statistics.median(times)


def variants(ext, pkg, sm_count: int, dtype_name: str):
    """name -> launch(x, out); the first entries are the peers."""
    v = {
        "torch.relu": lambda x, o: torch.relu(x),
        "copy_": lambda x, o: o.copy_(x),
        "copy16": lambda x, o: ext.copy_variant(x, o, 1, 256, 0, 0, 0),
    }
    if pkg is not None:
        v["relu(out=) op"] = lambda x, o: pkg.relu(x, out=o)
    for threads in (64, 128, 256, 512):
        v[f"v1 t{threads}"] = (lambda t: lambda x, o: ext.relu_variant(x, o, 1, t, 0, 0, 0))(threads)
    # The same launch again, for the spread between two timings of one variant.
    v["v1 t256 again"] = lambda x, o: ext.relu_variant(x, o, 1, 256, 0, 0, 0)
    v["v1 t256 ldcs+stcs again"] = lambda x, o: ext.relu_variant(x, o, 1, 256, 0, 1, 1)
    v["v1 t128 ldcs+stcs"] = lambda x, o: ext.relu_variant(x, o, 1, 128, 0, 1, 1)
    for vectors in (2, 4):
        for threads in (128, 256):
            v[f"v{vectors} t{threads}"] = (lambda k, t: lambda x, o: ext.relu_variant(x, o, k, t, 0, 0, 0))(vectors, threads)
    for per_sm in (8, 16):
        v[f"v1 t256 grid {per_sm}/SM"] = (lambda b: lambda x, o: ext.relu_variant(x, o, 1, 256, b, 0, 0))(per_sm * sm_count)
    for load, store, tag in ((1, 0, "ldcs"), (0, 1, "stcs"), (1, 1, "ldcs+stcs")):
        v[f"v1 t256 {tag}"] = (lambda l, s: lambda x, o: ext.relu_variant(x, o, 1, 256, 0, l, s))(load, store)
        v[f"v2 t256 {tag}"] = (lambda l, s: lambda x, o: ext.relu_variant(x, o, 2, 256, 0, l, s))(load, store)
    # Read-only (ld.global.nc) loads: what torch's kernels may use; not valid in place.
    for vectors, threads, store, tag in ((1, 256, 0, ""), (1, 128, 0, ""), (2, 256, 0, ""), (4, 256, 0, ""), (1, 256, 1, "+stcs")):
        v[f"v{vectors} t{threads} nc{tag}"] = (lambda k, t, s: lambda x, o: ext.relu_variant(x, o, k, t, 0, 2, s))(vectors, threads, store)
    return v


TUNE_SIZES = [4 * KIB, 64 * KIB, 1 * MIB, 4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB, 48 * MIB, 64 * MIB, 96 * MIB, 256 * MIB, 1 * GIB]


def run_tune(ext, pkg, l2_bytes: int, sm_count: int, out_dir: Path) -> list[dict]:
    rows = []
    for dtype_name, dtype in DTYPES.items():
        for nbytes in TUNE_SIZES:
            for mode in ("hot", "cold"):
                if mode == "cold" and nbytes < 1 * MIB:
                    continue  # launch-bound there; a cold rotation would need thousands of calls
                pairs = 1 if mode == "hot" else cold_pairs(nbytes, l2_bytes)
                calls = max(20, pairs) if mode == "cold" else 20
                bufs = Buffers(nbytes, dtype, pairs)
                for name, fn in variants(ext, pkg, sm_count, dtype_name).items():
                    t = graph_time_us(lambda i, fn=fn: fn(bufs.x[i], bufs.out[i]), pairs, calls,
                                      keep_outputs=nbytes * calls <= 4 * GIB)
                    rows.append({"dtype": dtype_name, "bytes": nbytes, "mode": mode, "variant": name,
                                 "us": t, "GBps": 2 * nbytes / t / 1e3})
                del bufs
        print(f"tune {dtype_name} done", flush=True)
    # The one-block-per-row baseline where the issue sets a target (float32).
    for label, shape in (("1 GiB as 16384 x 16384", (16384, 16384)), ("64 MiB as one row", (16 * MIB,))):
        x = torch.randn(shape, device="cuda")
        o = torch.empty_like(x)
        for name, fn in (("one block per row", lambda: ext.relu_one_block_per_row(x, o)),
                         ("v1 t256", lambda: ext.relu_variant(x, o, 1, 256, 0, 0, 0)),
                         ("torch.relu", lambda: torch.relu(x))):
            t = graph_time_us(lambda i, fn=fn: fn(), 1, 5 if "row" in name and "one row" in label else 20, 3)
            rows.append({"dtype": "float32", "bytes": x.numel() * 4, "mode": "hot", "variant": f"{name} [{label}]",
                         "us": t, "GBps": 2 * x.numel() * 4 / t / 1e3})
        del x, o
    return rows


L2_SIZES = [1 * MIB, 4 * MIB, 8 * MIB, 16 * MIB, 24 * MIB, 32 * MIB, 40 * MIB, 48 * MIB, 56 * MIB, 64 * MIB, 72 * MIB, 80 * MIB, 96 * MIB, 120 * MIB]
HINTS = {"default": (0, 0), "ldcs": (1, 0), "stcs": (0, 1), "ldcs+stcs": (1, 1), "nc": (2, 0)}


def run_l2_band(ext, l2_bytes: int, out_dir: Path) -> list[dict]:
    """relu with each cache-hint pair, for inputs from 1 MiB (where the policy starts
    streaming) through ~L2/2 to 2x L2:
    isolated   relu on one pair (hot) / rotated pairs (cold);
    producer   copy16(src -> x) then relu(x -> out): x was just written, as inside a model;
    chain      producer, relu, then a consumer copy16(out -> dst) that reads relu's output.
    src and dst rotate through buffers that exceed the L2 together (cold, like other layers'
    data); x and out are one pair (an allocator hands the same blocks back each step)."""
    rows = []
    for dtype_name in ("float32", "bfloat16"):
        dtype = DTYPES[dtype_name]
        for nbytes in L2_SIZES:
            ring = cold_pairs(nbytes, l2_bytes)
            srcs = Buffers(nbytes, dtype, ring)  # src = srcs.x[i], dst = srcs.out[i]
            pair = Buffers(nbytes, dtype, 1)
            x, out = pair.x[0], pair.out[0]
            calls = max(20, ring)
            copy = lambda a, b: ext.copy_variant(a, b, 1, 256, 0, 0, 0)
            base = {
                "producer only": lambda i: copy(srcs.x[i], x),
                "producer+consumer only": lambda i: (copy(srcs.x[i], x), copy(out, srcs.out[i])),
            }
            for name, fn in base.items():
                rows.append({"dtype": dtype_name, "bytes": nbytes, "scenario": name, "hints": "-",
                             "us": graph_time_us(fn, ring, calls)})
            for hint, (ld, st) in HINTS.items():
                relu = lambda a, b, ld=ld, st=st: ext.relu_variant(a, b, 1, 256, 0, ld, st)
                scenarios = {
                    "isolated hot": (lambda i: relu(x, out), 1, 20),
                    "isolated cold": (lambda i: relu(srcs.x[i], srcs.out[i]), ring, calls),
                    "producer->relu": (lambda i: (copy(srcs.x[i], x), relu(x, out)), ring, calls),
                    "producer->relu->consumer": (lambda i: (copy(srcs.x[i], x), relu(x, out), copy(out, srcs.out[i])), ring, calls),
                }
                for name, (fn, pairs, n_calls) in scenarios.items():
                    rows.append({"dtype": dtype_name, "bytes": nbytes, "scenario": name, "hints": hint,
                                 "us": graph_time_us(fn, pairs, n_calls)})
            del srcs, pair, x, out
        print(f"l2 band {dtype_name} done", flush=True)
    return rows


def summarize(rows: list[dict]) -> str:
    """Per dtype x size x mode: the best variant, the default one, and the peers."""
    lines = []
    keyed = {}
    for r in rows:
        if "mode" in r:
            keyed.setdefault((r["dtype"], r["bytes"], r["mode"]), {})[r["variant"]] = r["us"]
    head = f"{'dtype':9} {'size':>9} {'mode':4} {'torch':>8} {'copy':>8} {'op':>8} {'v1t256':>8} {'best':>8}  best variant        relu/op  ceil%"
    lines.append(head)
    for (dtype, nbytes, mode), v in keyed.items():
        if "torch.relu" not in v:
            continue
        ours = {k: t for k, t in v.items() if k.startswith("v")}
        best = min(ours, key=ours.get)
        ceiling = min(v["copy_"], v["copy16"])
        op = v.get("relu(out=) op", float("nan"))
        size = f"{nbytes / MIB:g}M" if nbytes >= MIB else f"{nbytes / KIB:g}K"
        lines.append(f"{dtype:9} {size:>9} {mode:4} {v['torch.relu']:8.2f} {ceiling:8.2f} {op:8.2f} {v['v1 t256']:8.2f} "
                     f"{ours[best]:8.2f}  {best:18} {v['torch.relu'] / op:6.3f}  {100 * ceiling / op:5.1f}")
    for r in rows:
        if "[" in r.get("variant", ""):
            lines.append(f"{r['variant']:48} {r['us']:10.2f} us")
    return "\n".join(lines)


def l2band_table(path: Path) -> str:
    """L2_BAND_CLIFF.md's tables from an l2_band.json: relu's own time in each scenario
    (chain minus producer and consumer alone; producer->relu minus producer alone)."""
    data = json.loads(path.read_text())
    cells = {}
    for r in data["rows"]:
        cells[(r["dtype"], r["bytes"], r["scenario"], r["hints"])] = r["us"]
    hints = [h for h in HINTS if any(k[3] == h for k in cells)]
    lines = []
    for dtype in dict.fromkeys(k[0] for k in cells):
        sizes = sorted({k[1] for k in cells if k[0] == dtype})
        for scenario, base in (("producer->relu->consumer", "producer+consumer only"),
                               ("producer->relu", "producer only"), ("isolated cold", None), ("isolated hot", None)):
            lines.append(f"\n{dtype}, {scenario}: relu's time, us ({'minus ' + base if base else 'per call'})\n")
            lines.append("| input MiB | " + " | ".join(hints) + " | ldcs+stcs / default |")
            lines.append("|---:|" + "---:|" * (len(hints) + 1))
            for nbytes in sizes:
                offset = cells[(dtype, nbytes, base, "-")] if base else 0.0
                t = {h: cells[(dtype, nbytes, scenario, h)] - offset for h in hints}
                lines.append(f"| {nbytes / MIB:g} | " + " | ".join(f"{t[h]:.2f}" for h in hints)
                             + f" | {t['ldcs+stcs'] / t['default']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "h200")
    parser.add_argument("--only", choices=["tune", "l2band"], default=None)
    parser.add_argument("--l2band-table", type=Path, default=None, metavar="L2_BAND_JSON",
                        help="print L2_BAND_CLIFF.md's tables from a results file and exit (no GPU needed)")
    args = parser.parse_args()
    if args.l2band_table is not None:
        print(l2band_table(args.l2band_table))
        return
    args.out.mkdir(parents=True, exist_ok=True)

    started = time.time()
    ext = build_tune_extension()
    pkg = load_package_kernel()
    sm_count, l2_bytes, cc = ext.device_traits(torch.cuda.current_device())
    device = {"name": torch.cuda.get_device_name(), "sm_count": sm_count, "l2_bytes": l2_bytes,
              "compute_capability": cc, "torch": torch.__version__}
    print(device, f"(extension ready after {time.time() - started:.0f} s)", flush=True)
    command = "python scripts/h200_tune.py " + " ".join(sys.argv[1:])
    if args.only in (None, "tune"):
        rows = run_tune(ext, pkg, l2_bytes, sm_count, args.out)
        (args.out / "tune.json").write_text(json.dumps({"command": command, "device": device, "rows": rows}, indent=1))
        summary = summarize(rows)
        (args.out / "tune_summary.txt").write_text(summary + "\n")
        print(summary, flush=True)
    if args.only in (None, "l2band"):
        rows = run_l2_band(ext, l2_bytes, args.out)
        (args.out / "l2_band.json").write_text(json.dumps({"command": command, "device": device, "rows": rows}, indent=1))
    print(f"done in {time.time() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
