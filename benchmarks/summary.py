"""The headline ratios of a docs run (scripts/h200_docs.sh, scripts/bench.sh) in one screen of
markdown: each area's like-for-like ratios as ranges over its points, the worst point named.
Ratios are peer time / ours (> 1: ours is faster) unless a line says otherwise.

    python benchmarks/summary.py results/h200/build-<commit>
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


def sweep_lines(data: dict, ops=("forward",)) -> list[str]:
    table = {}
    for r in data["records"]:
        if "us" in r and r["op"] in ops:
            table.setdefault((r["op"], r["dtype"], r["bytes"], r["mode"]), {})[r["peer"]] = r["us"]
    pairs = {"forward": [("relu", "torch.relu"), ("relu_out", "clamp_min_out"), ("relu_out", "copy_")],
             "misaligned": [("relu", "torch.relu"), ("relu_out", "clamp_min_out")],
             "backward": [("relu_backward", "threshold_backward")], "latency": [("relu", "torch.relu"),
                                                                               ("relu_out", "clamp_min_out")]}
    lines = []
    for op in ops:
        for ours, peer in pairs[op]:
            for mode in sorted({k[3] for k in table if k[0] == op}):
                points = [(rec[peer] / rec[ours], f"{d} {fmt_size(b)}") for (o, d, b, m), rec in table.items()
                          if o == op and m == mode and ours in rec and peer in rec]
                lines.append(f"- {op} {mode}: {peer} / {ours}: {span(points)}")
    return lines


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a docs run's results folder")
    root = parser.parse_args().folder
    out = [f"# Summary of {root}"]
    if (dense := load(root / "dense" / "sweep.json")) is not None:
        out += ["", "## Dense, backward, misaligned, per-call host time (sweep.py)"]
        out += sweep_lines(dense, ("forward", "backward", "misaligned", "latency"))
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
    for label, path in (("Views (views.py)", root / "views" / "views.json"),
                        ("Fallback views (noarch)", root / "fallback" / "views" / "views.json")):
        if (views := load(path)) is not None:
            times = {(r["view"], r["dtype"], r["mode"], r["peer"]): r["us"] for r in views["records"] if "us" in r}
            out += ["", f"## {label}"]
            for ours, peer in (("relu", "torch.relu"), ("relu_out", "clamp_min_out")):
                points = [(times[k[:3] + (peer,)] / us, " ".join(k[:3])) for k, us in times.items()
                          if k[3] == ours and k[:3] + (peer,) in times]
                out.append(f"- {peer} / {ours}: {span(points)}")
    for label, path in (("dtypes.py", root / "dtypes" / "dtypes.json"), ("fallback, float8", root / "fallback" / "dtypes.json")):
        if (dtypes := load(path)) is not None:
            out += ["", f"## New dtypes ({label})"]
            rows = dtypes["records"]
            out.append(f"- o.copy_(x) / relu(x, out=o): {span([(r['copy/relu_out'], r['dtype'] + ' ' + fmt_size(r['bytes'])) for r in rows])}")
            up = [(r["speedup vs upcast out="], r["dtype"] + " " + fmt_size(r["bytes"])) for r in rows if "speedup vs upcast out=" in r]
            out.append(f"- upcast path (out=) / relu(x, out=o): {span(up)}")
    for path in (root / "compile").glob("compile_blocks_*.json"):
        out += ["", "## torch.compile blocks (relu compiled / torch.relu compiled; below 1: ours is faster)"]
        out += [f"- {r['block']} {r['dtype']} {r['pass']}: {r['relu_compiled_over_torch_relu_compiled']:.3f}"
                for r in load(path)["records"]]
    if (training := load(root / "training" / "training_step.json")) is not None:
        out += ["", "## Eager training (kernel / plain time; above 1: the kernel is slower)"]
        out += [f"- {r['workload']} {r['dtype']}: {r['kernel_over_plain']:.3f}" for r in training["records"]]
    for label, path in (("Host time per call, compiled variant", root / "host"),
                        ("Fallback (noarch), GPU and host time", root / "fallback")):
        for json_path in path.glob("compare_*.json"):
            data = load(json_path)
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
    print("\n".join(out))


if __name__ == "__main__":
    main()
