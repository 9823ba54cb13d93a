"""Study. Question: why does a plain Triton ReLU beat the product's dense kernel in the
L2-resident band (256 KiB-32 MiB on the H200) and below it, and which launch shape beats
every peer there? Answered in L2_BAND_CLIFF.md ("Why Triton won the band").

Times, per point (dtype x size x buffer mode), in one process and interleaved: the peers
(o.copy_(x), torch.clamp_min(x, 0, out=o), a plain Triton ReLU in 8 configurations), a
build of the product (relu(x, out=o); allocating: relu(x) against torch.relu(x) and
x.clone()), and the study's kernels (band_kernels.cu: tile shapes, an L2 prefetch hint, the
product's own tile rebuilt, copies, an empty kernel).

    nvcc -O3 -std=c++17 -arch=sm_90 -cudart static -Xcompiler -fPIC -shared -I. \\
        -I"$(python -c 'import torch, os; print(os.path.dirname(torch.__file__))')/include" \\
        benchmarks/studies/l2_band/band_kernels.cu -o .l2/libband.so
    python benchmarks/studies/l2_band/band.py --library .l2/libband.so \\
        --variant-dir <build>/torch-stable-abi211-cu130-x86_64-linux --out DIR
    python benchmarks/studies/l2_band/band.py --table DIR/band.json     # tables, anywhere
    python benchmarks/studies/l2_band/band.py ... --ncu                  # one launch each, for ncu

Timing: GPU time per call from CUDA-graph replay (benchmarks/timing.py's GraphSampler),
interleaved rounds, median. Modes: hot (one buffer pair), rot (pairs rotated within 0.75x
the L2: resident, never reused back to back), cold (inputs rotated over 1.5x the L2, so every
call reads DRAM; from 256 KiB). Every relu entry is checked bit for bit against
where(x > 0, x, 0) on NaN, -0.0 and random data, into a poisoned output, before it is timed.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import math
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # benchmarks/
KIB, MIB = 1 << 10, 1 << 20
SIZES = [4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 512 * KIB, MIB, 2 * MIB, 4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB]
DTYPES = ["float32", "float16", "bfloat16", "int8"]
DTYPE_CODES = {"float32": 0, "float16": 1, "bfloat16": 2, "int8": 3}
MODES = ["hot", "rot", "cold"]
TRITON_CONFIGS = [(block, warps) for block in (1024, 2048, 4096, 8192) for warps in (4, 8)]
PEERS_OUT = ["o.copy_(x)", "clamp_min(out=o)"] + [f"triton B{b} w{w}" for b, w in TRITON_CONFIGS]
CALLS = 40


def label(nbytes: int) -> str:
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // KIB} KiB"


def sets_for(mode: str, nbytes: int, l2: int) -> int:
    if mode == "hot":
        return 1
    if mode == "rot":
        return max(2, min(CALLS, int(0.75 * l2) // (2 * nbytes)))
    return math.ceil(1.5 * l2 / nbytes)


class Study:
    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        self.lib.band_variant_name.restype = ctypes.c_char_p
        self.lib.band_launch.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_int64, ctypes.c_void_p]
        self.names = [self.lib.band_variant_name(i).decode() for i in range(self.lib.band_variant_count())]

    def launcher(self, index: int, dtype: str):
        import torch

        code = DTYPE_CODES[dtype]

        def run(x, o):
            status = self.lib.band_launch(index, code, x.data_ptr(), o.data_ptr(), x.numel(),
                                          torch.cuda.current_stream().cuda_stream)
            if status != 0:
                raise RuntimeError(f"{self.names[index]}: launch status {status}")

        return run


def triton_relu():
    """The sweep's plain Triton ReLU (benchmarks/baselines.py), as launch(x, o, block, warps)."""
    from baselines import load_triton_relu

    launch = load_triton_relu()
    return lambda x, o, block, warps: launch(o, x, block, warps)


def load_product(variant_dir: Path, module_name: str):
    """A build of the product through its compat package (the snapshot's `import relu`
    route), loaded under `module_name` so that two builds can share the process."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(module_name, variant_dir / "relu" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def entries_for(dtype: str, study: Study, triton, product, old=None) -> dict:
    """name -> (call(x, o), relu or copy, allocating)."""
    import torch

    out = {
        "o.copy_(x)": (lambda x, o: o.copy_(x), "copy", False),
        "clamp_min(out=o)": (lambda x, o: torch.clamp_min(x, 0, out=o), "torch", False),
    }
    for block, warps in TRITON_CONFIGS:
        out[f"triton B{block} w{warps}"] = (lambda x, o, b=block, w=warps: triton(x, o, b, w), "relu", False)
    if product is not None:
        out["relu(x, out=o)"] = (lambda x, o: product.relu(x, out=o), "relu", False)
        out["relu(x)"] = (lambda x, o: product.relu(x), "relu", True)
    if old is not None:
        out["old relu(x, out=o)"] = (lambda x, o: old.relu(x, out=o), "relu", False)
        out["old relu(x)"] = (lambda x, o: old.relu(x), "relu", True)
    out["torch.relu(x)"] = (lambda x, o: torch.relu(x), "torch", True)
    out["x.clone()"] = (lambda x, o: x.clone(), "copy", True)
    for i, name in enumerate(study.names):
        kind = "copy" if name.startswith("copy") else "empty" if name == "empty" else "relu"
        out[name] = (lambda x, o, run=study.launcher(i, dtype): run(x, o), kind, False)
    return out


def random_input(n: int, t, data: str):
    """randn (half the elements negative), positive (relu is the identity) or negative (relu
    writes zeros); int8 uniform over its range, or its positive or negative half."""
    import torch

    if t.is_floating_point:
        x = torch.randn(n, device="cuda")
        x = x.abs() + 1e-3 if data == "positive" else -x.abs() - 1e-3 if data == "negative" else x
        return x.to(t)
    low, high = {"positive": (1, 128), "negative": (-128, 0)}.get(data, (-128, 128))
    return torch.randint(low, high, (n,), device="cuda", dtype=t)


def check(call, dtype, nbytes) -> str | None:
    """Bit-exact against where(x > 0, x, 0), NaN and -0.0 included, into a poisoned output."""
    import torch

    t = getattr(torch, dtype)
    n = nbytes // t.itemsize
    if t.is_floating_point:
        x = torch.randn(n, device="cuda").to(t)
        x[: min(n, 8)] = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), -float("inf"), -1, 1, -2])[: min(n, 8)].to(t)
    else:
        x = torch.randint(-128, 128, (n,), device="cuda", dtype=t)
    o = torch.full_like(x, 7)
    result = call(x, o)
    got = result if isinstance(result, torch.Tensor) and result.data_ptr() != o.data_ptr() else o
    want = torch.where(x > 0, x, torch.zeros((), dtype=t, device="cuda"))
    bits = {1: torch.int8, 2: torch.int16, 4: torch.int32}[t.itemsize]
    return None if torch.equal(got.view(bits), want.view(bits)) else "mismatch"


def measure(args) -> dict:
    import torch
    from timing import GraphSampler

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    study = Study(args.library)
    triton = triton_relu()
    product = load_product(Path(args.variant_dir), "relu_new") if args.variant_dir else None
    old = load_product(Path(args.old_variant_dir), "relu_old") if args.old_variant_dir else None
    rows, failures = [], []
    started = time.time()
    out_path = Path(args.out) / "band.json"
    meta = {"command": " ".join(sys.argv), "when": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "device": torch.cuda.get_device_name(0), "sms": torch.cuda.get_device_properties(0).multi_processor_count,
            "l2_bytes": l2, "torch": torch.__version__, "triton": __import__("triton").__version__,
            "calls": CALLS, "rounds": args.rounds, "passes": args.passes, "data": args.data}
    for pass_ in range(args.passes):
        for nbytes in args.sizes:
            for dtype in args.dtypes:
                entries = entries_for(dtype, study, triton, product, old)
                if args.entries:
                    entries = {k: v for k, v in entries.items() if k in args.entries or k in PEERS_OUT}
                if pass_ == 0:
                    for name, (call, kind, _) in entries.items():
                        if kind == "relu":
                            try:
                                if check(call, dtype, nbytes):
                                    failures.append((name, dtype, nbytes))
                            except Exception as error:  # noqa: BLE001
                                failures.append((name, dtype, nbytes, str(error)))
                t = getattr(torch, dtype)
                for mode in args.modes:
                    if (mode == "cold" and nbytes < 256 * KIB) or (mode == "rot" and 4 * nbytes > 0.75 * l2):
                        continue
                    sets = sets_for(mode, nbytes, l2)
                    n = nbytes // t.itemsize
                    pairs = [(random_input(n, t, args.data), torch.empty(n, device="cuda", dtype=t)) for _ in range(sets)]
                    calls = max(CALLS, sets)
                    samplers = {name: GraphSampler(lambda p, c=call: c(*p), sets=pairs, calls=calls)
                                for name, (call, _, _) in entries.items()}
                    names = list(samplers)
                    samples = {name: [] for name in names}
                    for r in range(args.rounds):
                        for name in (names if r % 2 == 0 else reversed(names)):
                            samples[name].append(samplers[name].sample())
                    for name in names:
                        rows.append({"pass": pass_, "dtype": dtype, "bytes": nbytes, "mode": mode, "sets": sets,
                                     "entry": name, "allocating": entries[name][2],
                                     "us": statistics.median(samples[name]) * 1e6})
                    del samplers, pairs
                    torch.cuda.empty_cache()
                out_path.write_text(json.dumps({"meta": meta, "failures": failures, "rows": rows}))
                if time.time() - started > args.time_limit_s:
                    meta["stopped_early"] = True
                    out_path.write_text(json.dumps({"meta": meta, "failures": failures, "rows": rows}))
                    return {"meta": meta, "failures": failures, "rows": rows}
    meta["wall_s"] = round(time.time() - started, 1)
    result = {"meta": meta, "failures": failures, "rows": rows}
    out_path.write_text(json.dumps(result))
    return result


def ncu_run(args) -> None:
    """One launch of each named entry at each point, after a warm-up launch, between
    cudaProfilerStart/Stop: run under `ncu --profile-from-start off`."""
    import torch

    study = Study(args.library)
    triton = triton_relu()
    product = load_product(Path(args.variant_dir), "relu_new") if args.variant_dir else None
    for nbytes in args.sizes:
        for dtype in args.dtypes:
            t = getattr(torch, dtype)
            n = nbytes // t.itemsize
            x = torch.randn(n, device="cuda").to(t) if t.is_floating_point else torch.randint(-128, 128, (n,), device="cuda", dtype=t)
            o = torch.empty_like(x)
            entries = entries_for(dtype, study, triton, product)
            for name in args.entries:
                call = entries[name][0]
                call(x, o)
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                call(x, o)
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                print(f"ncu: {dtype} {label(nbytes)} {name}", flush=True)


def table(path: str) -> str:
    data = json.loads(Path(path).read_text())
    times: dict = {}
    for r in data["rows"]:
        times.setdefault((r["dtype"], r["bytes"], r["mode"], r["entry"]), []).append(r["us"])
    med = {k: statistics.median(v) for k, v in times.items()}
    points = sorted({k[:3] for k in med}, key=lambda p: (p[1], DTYPES.index(p[0]), MODES.index(p[2])))
    entries = sorted({k[3] for k in med})
    lines = [f"# {data['meta']['device']}, torch {data['meta']['torch']}, Triton {data['meta']['triton']}",
             f"failures: {data['failures']}", "",
             "Per point: best out= peer (copy_, clamp_min, 8 Triton configs), relu(x, out=o), the best study "
             "tile; allocating: torch.relu(x), x.clone(), relu(x). us, GPU time per call.", "",
             "| dtype | size | mode | best peer | peer | relu_out | best/relu_out | best tile | tile | best/tile | torch.relu | relu(x) | torch.relu/relu(x) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        peers = {e: med[p + (e,)] for e in PEERS_OUT if p + (e,) in med}
        if not peers:
            continue
        best = min(peers, key=peers.get)
        tiles = {e: med[p + (e,)] for e in entries if e.startswith("tile") and p + (e,) in med}
        bt = min(tiles, key=tiles.get) if tiles else None
        ro, ra, tr = med.get(p + ("relu(x, out=o)",)), med.get(p + ("relu(x)",)), med.get(p + ("torch.relu(x)",))
        f = lambda v: "" if v is None else f"{v:.2f}"  # noqa: E731
        lines.append(f"| {p[0]} | {label(p[1])} | {p[2]} | {peers[best]:.2f} | {best} | {f(ro)} | "
                     f"{'' if ro is None else f'{peers[best] / ro:.3f}'} | {f(tiles.get(bt))} | {bt} | "
                     f"{'' if bt is None else f'{peers[best] / tiles[bt]:.3f}'} | {f(tr)} | {f(ra)} | "
                     f"{'' if ra is None or tr is None else f'{tr / ra:.3f}'} |")
    lines += ["", "Per entry: geometric mean and worst of best-out=-peer / entry over the points, by size range.", "",
              "| entry | 4-64 KiB | 256 KiB-2 MiB | 4-32 MiB | worst |", "|---|---|---|---|---|"]
    ranges = [(0, 64 * KIB), (256 * KIB, 2 * MIB), (4 * MIB, 32 * MIB)]
    for e in entries:
        cells, worst = [], None
        for lo, hi in ranges:
            ratios = []
            for p in points:
                if lo <= p[1] <= hi and p + (e,) in med:
                    peers = [med[p + (q,)] for q in PEERS_OUT if p + (q,) in med]
                    ratio = min(peers) / med[p + (e,)]
                    ratios.append(ratio)
                    worst = min(worst or (9, None), (ratio, p))
            cells.append(f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}" if ratios else "")
        lines.append(f"| {e} | {' | '.join(cells)} | {worst[0]:.3f} {worst[1][0]} {label(worst[1][1])} {worst[1][2]} |"
                     if worst else f"| {e} | | | | |")
    # Per size, the best study tile against the product's op (geometric mean over dtypes and
    # modes of relu(x, out=o) / tile: above 1 the tile is faster).
    tiles = [e for e in entries if e.startswith("tile")]
    if tiles and any(p + ("relu(x, out=o)",) in med for p in points):
        lines += ["", "Per size: the study's tiles against relu(x, out=o), geometric mean over dtypes and modes "
                  "of relu(x, out=o) / tile (above 1: the tile is faster); the best tile and the worst point of it.", "",
                  "| size | best tile | geomean | its lowest point |", "|---|---|---|---|"]
        for nbytes in sorted({p[1] for p in points}):
            at = [p for p in points if p[1] == nbytes and p + ("relu(x, out=o)",) in med]
            scored = []
            for e in tiles:
                ratios = [med[p + ("relu(x, out=o)",)] / med[p + (e,)] for p in at if p + (e,) in med]
                if ratios:
                    scored.append((math.exp(sum(map(math.log, ratios)) / len(ratios)), min(ratios), e))
            if scored:
                g, low, e = max(scored)
                lines.append(f"| {label(nbytes)} | {e} | {g:.3f} | {low:.3f} |")
    smallest = min(p[1] for p in points)
    small = ["empty", "o.copy_(x)", "relu(x, out=o)", "product t256 v1", "tile t256 v1", "tile t256 v2"]
    if any(p + ("empty",) in med for p in points):
        lines += ["", f"At {label(smallest)}: a kernel node's floor (an empty kernel), copy_'s node and the relu kernels, us.", "",
                  "| dtype | mode | " + " | ".join(small) + " |", "|---|---|" + "---|" * len(small)]
        for p in points:
            if p[1] == smallest:
                lines.append(f"| {p[0]} | {p[2]} | " + " | ".join(
                    f"{med[p + (e,)]:.2f}" if p + (e,) in med else "" for e in small) + " |")
    # The target "at least the best peer at every point" against the same test of each peer:
    # how often is an entry at least as fast as every other out= entry, and the run's spread.
    contenders = PEERS_OUT + ["relu(x, out=o)"]
    band = [p for p in points if 256 * KIB <= p[1] <= 32 * MIB]
    spreads = sorted(abs(v[0] / v[1] - 1) for k, v in times.items()
                     if len(v) == 2 and 256 * KIB <= k[1] <= 32 * MIB)
    if band:
        lines += ["", f"In the band (256 KiB-32 MiB, {len(band)} points): points at which an out= entry is at least as "
                  "fast as every other one (the issue's target, applied to each peer alike)"
                  + (f"; pass-to-pass spread of one entry: median {100 * statistics.median(spreads):.1f}%, "
                     f"90th percentile {100 * spreads[int(0.9 * len(spreads))]:.1f}%." if spreads else "."), "",
                  "| entry | points won | geomean fastest-other / entry | worst |", "|---|---|---|---|"]
        for e in contenders:
            ratios = [min(med[p + (q,)] for q in contenders if q != e and p + (q,) in med) / med[p + (e,)]
                      for p in band if p + (e,) in med]
            if ratios:
                lines.append(f"| {e} | {sum(r >= 1 for r in ratios)} | "
                             f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f} | {min(ratios):.3f} |")
    pairs = [("relu(x, out=o)", "old relu(x, out=o)"), ("relu(x)", "old relu(x)")]
    if any(p + (old,) in med for p in points for _, old in pairs):
        lines += ["", "Two builds: GPU time new / old (above 1: the new build is slower).", "",
                  "| form | points | geomean | max | at |", "|---|---|---|---|---|"]
        for new, old in pairs:
            ratios = [(med[p + (new,)] / med[p + (old,)], p) for p in points if p + (new,) in med and p + (old,) in med]
            if ratios:
                worst = max(ratios)
                lines.append(f"| {new} | {len(ratios)} | {math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios)):.3f} | "
                             f"{worst[0]:.3f} | {worst[1][0]} {label(worst[1][1])} {worst[1][2]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library")
    parser.add_argument("--variant-dir")
    parser.add_argument("--old-variant-dir", help="another build, timed beside --variant-dir's")
    parser.add_argument("--data", choices=["randn", "positive", "negative"], default="randn")
    parser.add_argument("--out", default=".")
    parser.add_argument("--sizes", nargs="+", type=int, default=SIZES)
    parser.add_argument("--dtypes", nargs="+", default=DTYPES)
    parser.add_argument("--modes", nargs="+", default=MODES)
    parser.add_argument("--entries", nargs="+", default=None, help="study/product entries (peers always)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--time-limit-s", type=float, default=300)
    parser.add_argument("--table", help="print the tables of a band.json and exit")
    parser.add_argument("--ncu", action="store_true", help="one profiled launch per entry (run under ncu)")
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    if args.ncu:
        ncu_run(args)
        return
    Path(args.out).mkdir(parents=True, exist_ok=True)
    result = measure(args)
    (Path(args.out) / "band.md").write_text(table(str(Path(args.out) / "band.json")) + "\n")
    print(f"{len(result['rows'])} timings, failures: {result['failures']}")


if __name__ == "__main__":
    main()
