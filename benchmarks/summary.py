"""The headline ratios of a docs run (scripts/h200_docs.sh, scripts/bench.sh) in one screen of
markdown: each area's like-for-like ratios as ranges over its points, the worst point named.
Ratios are peer time / ours (> 1: ours is faster) throughout; lines in us say so.

    python benchmarks/summary.py results/<build>/h200               # one screen
    python benchmarks/summary.py --detail results/<build>/cpu-<machine>   # the ranges the docs quote

--detail adds, below the screen, each dense pair per dtype and size band (below 1 MiB; from 1 MiB
while input and output fit the device's last-level cache together; past it), the L2 band per
dtype with its points below 1.00x, the compile blocks as peer / ours, and host time in us.
Both layouts are read: h200_docs.sh's (dense/, dtypes/, host/, training/) and bench.sh's (one
folder: sweep.json, dtypes.json, compare_<device>.json, training_step.json).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import fmt_size  # noqa: E402


def span(points: list[tuple[float, str]]) -> str:
    """'lo-hi (lowest: where)' of (ratio, where) pairs."""
    if not points:
        return "not measured"
    lo, hi = min(points), max(points)
    return f"{lo[0]:.3f}-{hi[0]:.3f}x (lowest: {lo[1]})"


def load(path: Path):
    return json.loads(path.read_text()) if path.exists() else None


def load_first(*paths: Path):
    """The first of the paths that exists, read (the two layouts name one file two ways)."""
    return next((load(p) for p in paths if p.exists()), None)


def size_band(nbytes: int, cache_bytes: int, tensors: int = 2) -> str:
    """Below 1 MiB (a call's fixed cost decides), resident (the pass's `tensors` tensors fit
    the last-level cache together), past the cache."""
    if nbytes < 1 << 20:
        return "below 1 MiB"
    return "resident" if tensors * nbytes <= cache_bytes else "past the cache"


def banded(points: list[tuple[float, str, int, str]], cache_bytes: int, tensors: int = 2) -> str:
    """'dtype: band sizes lo-hi; ...' of (ratio, dtype, bytes, where) points: each dtype's
    ratios per size band, the band named by its sizes."""
    parts = []
    for dtype in dict.fromkeys(p[1] for p in points):
        cells = []
        for band in ("below 1 MiB", "resident", "past the cache"):
            group = [p for p in points if p[1] == dtype and size_band(p[2], cache_bytes, tensors) == band]
            if group:
                sizes = sorted(p[2] for p in group)
                lo, hi = min(p[0] for p in group), max(p[0] for p in group)
                if len(sizes) == 1:
                    cells.append(f"{fmt_size(sizes[0])} {lo:.3f}x")
                else:
                    cells.append(f"{fmt_size(sizes[0])}-{fmt_size(sizes[-1])} {lo:.3f}-{hi:.3f}x")
        parts.append(f"{dtype} " + ", ".join(cells))
    return "; ".join(parts)


# Each sweep op's like-with-like pairs: (ours, peer).
PAIRS = {"forward": [("relu", "torch.relu"), ("relu_out", "clamp_min_out"), ("relu_out", "copy_")],
         "misaligned": [("relu", "torch.relu"), ("relu_out", "clamp_min_out")],
         "backward": [("relu_backward", "threshold_backward")],
         "latency": [("relu", "torch.relu"), ("relu_out", "clamp_min_out")]}


def sweep_table(data: dict, ops) -> dict:
    """(op, dtype, bytes, mode) -> {peer: us} for the sweep's timed records of these ops."""
    table = {}
    for r in data["records"]:
        if "us" in r and r["op"] in ops:
            table.setdefault((r["op"], r["dtype"], r["bytes"], r["mode"]), {})[r["peer"]] = r["us"]
    return table


def sweep_lines(data: dict, ops=("forward",)) -> list[str]:
    table = sweep_table(data, ops)
    lines = []
    for op in ops:
        for ours, peer in PAIRS[op]:
            for mode in sorted({k[3] for k in table if k[0] == op}):
                points = [(rec[peer] / rec[ours], f"{d} {fmt_size(b)}") for (o, d, b, m), rec in table.items()
                          if o == op and m == mode and ours in rec and peer in rec]
                lines.append(f"- {op} {mode}: {peer} / {ours}: {span(points)}")
    return lines


def sweep_detail(data: dict, ops: tuple[str, ...]) -> list[str]:
    """sweep_lines' pairs per dtype and size band (sizes ascending within each band)."""
    cache = data["meta"].get("cache_bytes") or 0
    dtypes = list(dict.fromkeys(r["dtype"] for r in data["records"]))
    table = sweep_table(data, ops)
    lines = [f"(bands: below 1 MiB; resident: the pass's tensors (2, backward 3) fit the {fmt_size(cache)} cache "
             "together; past the cache)"]
    for op in ops:
        for ours, peer in PAIRS[op]:
            for mode in sorted({k[3] for k in table if k[0] == op}):
                points = sorted(((rec[peer] / rec[ours], d, b, "") for (o, d, b, m), rec in table.items()
                                 if o == op and m == mode and ours in rec and peer in rec),
                                key=lambda p: (dtypes.index(p[1]), p[2]))
                if points:
                    tensors = 3 if op == "backward" else 2
                    lines.append(f"- {op} {mode}, {peer} / {ours}: {banded(points, cache, tensors)}")
    return lines


def band_detail(band: dict) -> list[str]:
    """The L2 band per dtype and mode: best peer / ours (out=), its points below 1.00x at two
    decimals (< 0.995), and torch.relu(x) / relu(x)."""
    table = {}
    for r in band["records"]:
        if "us" in r:
            table.setdefault((r["dtype"], r["mode"]), {}).setdefault(r["bytes"], {})[(r["form"], r["peer"])] = r["us"]
    lines, below_all, total = [], 0, 0
    for (dtype, mode), sizes in table.items():
        best, torch_ratio = [], []
        for nbytes, rec in sorted(sizes.items()):
            peers = [us for (f, p), us in rec.items() if f == "out" and p != "relu_out"]
            if ("out", "relu_out") in rec and peers:
                best.append((min(peers) / rec[("out", "relu_out")], fmt_size(nbytes)))
            if ("allocating", "relu") in rec and ("allocating", "torch.relu") in rec:
                torch_ratio.append((rec[("allocating", "torch.relu")] / rec[("allocating", "relu")], fmt_size(nbytes)))
        below = [w for r, w in best if r < 0.995]
        below_all, total = below_all + len(below), total + len(best)
        lines.append(f"- {dtype} {mode}: out= best peer / ours {span(best)}, {len(below)} of {len(best)} below 1.00x"
                     f"{' (' + ', '.join(below) + ')' if below else ''}; torch.relu / relu {span(torch_ratio)}")
    lines.append(f"- all: {below_all} of {total} out= points below 1.00x")
    return lines


def host_detail(data: dict) -> list[str]:
    """Host time per call in us, each peer's range over the sizes."""
    host = [r for r in data["records"] if r["part"] == "host"]
    if not host:
        return []
    sizes = [r["bytes"] for r in host]
    where = f"{host[0]['dtype']} {fmt_size(min(sizes))}-{fmt_size(max(sizes))}"
    lines = []
    for name in dict.fromkeys(n for r in host for n in r["us"]):
        us = [r["us"][name] for r in host if name in r["us"]]
        lines.append(f"- host us, {name}: {min(us):.2f}-{max(us):.2f} ({where})")
    return lines


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a docs run's results folder")
    parser.add_argument("--detail", action="store_true", help="add the per-dtype, per-size-band ranges")
    args = parser.parse_args()
    root = args.folder
    out = [f"# Summary of {root}"]
    detail = ["", "# Detail"]
    dense = load_first(root / "dense" / "sweep.json", root / "sweep.json")
    if dense is not None:
        out += ["", "## Dense, backward, misaligned, per-call host time (sweep.py)"]
        out += sweep_lines(dense, ("forward", "backward", "misaligned", "latency"))
        detail += ["", "## Dense per dtype and size band (peer / ours)"]
        detail += sweep_detail(dense, ("forward", "backward", "misaligned"))
    if (band := load(root / "l2-band" / "sweep.json")) is not None:
        out += ["", "## L2 band (best peer / ours per form; below 1: a peer is faster)"]
        table = {}
        for r in band["records"]:
            if "us" in r:
                table.setdefault((r["dtype"], r["bytes"], r["mode"]), {})[(r["form"], r["peer"])] = r["us"]
        for form, ours in (("out", "relu_out"), ("allocating", "relu")):
            points = []
            for (d, b, m), rec in table.items():
                peers = [(us, p) for (f, p), us in rec.items() if f == form and p != ours]
                if (form, ours) in rec and peers:
                    best = min(peers)
                    points.append((best[0] / rec[(form, ours)], f"{d} {fmt_size(b)} {m}, {best[1]}"))
            out.append(f"- {form}: {span(points)}")
        detail += ["", "## L2 band per dtype and mode"] + band_detail(band)
    for label, path in (("Views (views.py)", root / "views" / "views.json"),
                        ("Fallback views (noarch)", root / "fallback" / "views" / "views.json")):
        if (views := load(path)) is not None:
            times = {(r["view"], r["dtype"], r["mode"], r["peer"]): r["us"] for r in views["records"] if "us" in r}
            out += ["", f"## {label}"]
            for ours, peer in (("relu", "torch.relu"), ("relu_out", "clamp_min_out")):
                points = [(times[k[:3] + (peer,)] / us, " ".join(k[:3])) for k, us in times.items()
                          if k[3] == ours and k[:3] + (peer,) in times]
                out.append(f"- {peer} / {ours}: {span(points)}")
    for label, paths in (("dtypes.py", (root / "dtypes" / "dtypes.json", root / "dtypes.json")),
                         ("fallback, float8", (root / "fallback" / "dtypes.json",))):
        if (dtypes := load_first(*paths)) is not None:
            out += ["", f"## New dtypes ({label})"]
            rows = dtypes["records"]
            out.append(f"- o.copy_(x) / relu(x, out=o): {span([(r['copy/relu_out'], r['dtype'] + ' ' + fmt_size(r['bytes'])) for r in rows])}")
            up = [(r["speedup vs upcast out="], r["dtype"] + " " + fmt_size(r["bytes"])) for r in rows if "speedup vs upcast out=" in r]
            out.append(f"- upcast path (out=) / relu(x, out=o): {span(up)}")
    for path in (root / "compile").glob("compile_blocks_*.json"):
        out += ["", "## torch.compile blocks (torch.relu compiled / relu compiled)"]
        out += [f"- {r['block']} {r['dtype']} {r['pass']}: {1 / r['relu_compiled_over_torch_relu_compiled']:.3f}x"
                for r in load(path)["records"]]
        ratios = [(1 / r["relu_compiled_over_torch_relu_compiled"], f"{r['block']} {r['pass']}") for r in load(path)["records"]]
        detail += ["", "## torch.compile blocks as peer / ours",
                   f"- torch.relu compiled / relu compiled: {span(ratios)}"]
    training = load_first(root / "training" / "training_step.json", root / "training_step.json")
    if training is not None:
        out += ["", "## Eager training (plain time / kernelized time)"]
        out += [f"- {r['workload']} {r['dtype']}: {1 / r['kernel_over_plain']:.3f}x" for r in training["records"]]
    for label, path in (("Host time per call, compiled variant", root / "host"),
                        ("Fallback (noarch), GPU and host time", root / "fallback"),
                        ("Host time per call (compare.py)", root)):
        for json_path in path.glob("compare_*.json"):
            data = load(json_path)
            meta = data.get("meta", {})
            detail += ["", f"## {label}: us per call ({json_path.relative_to(root)}, {meta.get('date_utc')}, "
                           f"git {meta.get('git')})"] + host_detail(data)
            builds = list(data["meta"]["builds"])
            out += ["", f"## {label} (torch / ours)"]
            for part in ("gpu", "host"):
                for form, peer in (("relu(x)", "torch.relu(x)"), ("relu(x, out=o)", "clamp_min(x, 0, out=o)")):
                    for b in builds:
                        points = [(r["us"][peer] / r["us"][f"{b} {form}"], f"{r['dtype']} {fmt_size(r['bytes'])} {r['mode']}")
                                  for r in data["records"] if r["part"] == part]
                        if points:
                            out.append(f"- {part}, {b} {form}: {span(points)}")
    for path in (root / "fallback").glob("noarch_rules_*.json"):
        out += ["", "## Candidate rules of the noarch variant (the fastest exact one per point; us)"]
        for r in load(path)["records"]:
            exact = {n: us for n, us in r["us"].items() if r["exact"][n]}
            best = min(exact, key=exact.get, default="none")
            out.append(f"- {r['dtype']} {fmt_size(r['bytes'])} {r['timing']}: {best} {exact.get(best, float('nan')):.2f}; "
                       f"inexact: {', '.join(n for n, ok in r['exact'].items() if not ok) or 'none'}")
    print("\n".join(out + (detail if args.detail else [])))


if __name__ == "__main__":
    main()
