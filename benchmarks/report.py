"""Markdown tables from a sweep's JSON (benchmarks/sweep.py), for PERFORMANCE.md.

    python benchmarks/report.py results/cpu/sweep.json  > results/cpu/report.md
    python benchmarks/report.py results/h200/sweep.json > results/h200/report.md
    python benchmarks/report.py results/cpu/sweep.json --dtypes float32 int8 --modes hot

Ratios are peer time / our time (> 1: we are faster). "ceiling" is the faster of
`o.copy_(x)` and, on CUDA, the plain 16-byte copy kernel, on the same bytes; "% ceiling" is
our bandwidth as a share of it. Targets (issue 2 for the CPU, issue 3 for CUDA) are
evaluated from the same numbers and printed met / MISSED.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

KiB, MiB, GiB = 1024, 1024**2, 1024**3
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "float64": 8, "int16": 2,
            "int32": 4, "int64": 8, "uint8": 1}
DTYPE_ORDER = list(ITEMSIZE)
OURS = "relu_out"
BASELINES = ("sse_baseline", "row_per_block")
CEILINGS = ("copy_", "copy16")


def fmt_size(nbytes: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    return f"{nbytes / MiB:.1f} MiB" if nbytes >= MiB else f"{nbytes / KiB:.1f} KiB"


def fmt_us(us: float) -> str:
    return f"{us:.2f}" if us < 100 else f"{us:.0f}"


class Sweep:
    def __init__(self, path: Path):
        data = json.loads(Path(path).read_text())
        self.meta = data["meta"]
        self.records = data["records"]
        # (op, dtype, bytes, mode) -> {peer: record}
        self.table: dict[tuple, dict[str, dict]] = defaultdict(dict)
        for r in self.records:
            if "us" in r:
                self.table[(r["op"], r["dtype"], r["bytes"], r["mode"])][r["peer"]] = r
        self.errors = [r for r in self.records if "error" in r]

    def us(self, op, dtype, nbytes, mode, peer):
        r = self.table.get((op, dtype, nbytes, mode), {}).get(peer)
        return r["us"] if r else None

    def modes(self, op):
        return sorted({k[3] for k in self.table if k[0] == op}, key=["cold", "hot", "eager"].index)

    def dtypes(self, op):
        return sorted({k[1] for k in self.table if k[0] == op}, key=DTYPE_ORDER.index)

    def sizes(self, op, dtype):
        return sorted({k[2] for k in self.table if k[0] == op and k[1] == dtype})

    def ceiling_us(self, op, dtype, nbytes, mode):
        times = [t for p in CEILINGS if (t := self.us(op, dtype, nbytes, mode, p)) is not None]
        return min(times) if times else None


def ratio(peer_us, ours_us) -> str:
    return f"{peer_us / ours_us:.2f}x" if peer_us is not None and ours_us else "-"


def forward_tables(s: Sweep, out: list[str], sizes_filter=None) -> None:
    for mode in s.modes("forward"):
        for dtype in s.dtypes("forward"):
            peers_here = {p for (op, d, b, m), rec in s.table.items()
                          if op == "forward" and d == dtype and m == mode for p in rec}
            columns = [p for p in ("torch.relu", "clamp_min_out", "torch.compile", *BASELINES) if p in peers_here]
            out.append(f"\n**{dtype}, {mode}** (relu(x, out=o); ratios = peer time / ours)\n")
            head = ["size", "ours us", "GB/s", "% ceiling", *[f"vs {c}" for c in columns], "relu(x) vs torch.relu"]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "---|" * len(head))
            for nbytes in s.sizes("forward", dtype):
                if sizes_filter and nbytes not in sizes_filter(dtype):
                    continue
                rec = s.table.get(("forward", dtype, nbytes, mode), {})
                ours = rec.get(OURS)
                if not ours:
                    continue
                ceiling = s.ceiling_us("forward", dtype, nbytes, mode)
                share = f"{100 * ceiling / ours['us']:.0f}%" if ceiling else "-"
                cells = [fmt_size(nbytes), fmt_us(ours["us"]), f"{ours['gbps']:.1f}", share]
                cells += [ratio(s.us("forward", dtype, nbytes, mode, c), ours["us"]) for c in columns]
                alloc = s.us("forward", dtype, nbytes, mode, "relu")
                cells.append(ratio(s.us("forward", dtype, nbytes, mode, "torch.relu"), alloc))
                out.append("| " + " | ".join(cells) + " |")


def latency_table(s: Sweep, out: list[str]) -> None:
    modes = s.modes("latency")
    if not modes:
        return
    mode = modes[0]
    out.append(f"\n**Eager per-call latency, 4096 elements, host-timed ({mode})**\n")
    out.append("| dtype | relu(x, out=o) us | relu(x) us | torch.relu(x) us | clamp_min(out=) us "
               "| out= / torch.relu | relu(x) / torch.relu |")
    out.append("|---|---|---|---|---|---|---|")
    for dtype in s.dtypes("latency"):
        for nbytes in s.sizes("latency", dtype):
            g = lambda p: s.us("latency", dtype, nbytes, mode, p)  # noqa: E731
            o, a, t, c = g("relu_out"), g("relu"), g("torch.relu"), g("clamp_min_out")
            cell = lambda v: fmt_us(v) if v is not None else "-"  # noqa: E731
            out.append(f"| {dtype} | {cell(o)} | {cell(a)} | {cell(t)} | {cell(c)} | "
                       f"{o / t:.2f} | {a / t:.2f} |" if o and a and t else f"| {dtype} | incomplete |")


def backward_table(s: Sweep, out: list[str]) -> None:
    for mode in s.modes("backward"):
        out.append(f"\n**Backward, {mode}**: relu_backward(grad, result) vs aten.threshold_backward "
                   "(3 tensors of the size moved)\n")
        out.append("| dtype | size | ours us | GB/s | threshold_backward us | ratio |")
        out.append("|---|---|---|---|---|---|")
        for dtype in s.dtypes("backward"):
            for nbytes in s.sizes("backward", dtype):
                rec = s.table.get(("backward", dtype, nbytes, mode), {})
                ours, theirs = rec.get("relu_backward"), rec.get("threshold_backward")
                if ours and theirs:
                    out.append(f"| {dtype} | {fmt_size(nbytes)} | {fmt_us(ours['us'])} | {ours['gbps']:.1f} | "
                               f"{fmt_us(theirs['us'])} | {ratio(theirs['us'], ours['us'])} |")


def flat_table(s: Sweep, out: list[str]) -> None:
    for mode in s.modes("flat1d"):
        for nbytes in s.sizes("flat1d", "float32"):
            rec = s.table.get(("flat1d", "float32", nbytes, mode), {})
            ours = rec.get(OURS)
            if not ours:
                continue
            parts = [f"{p} {fmt_us(r['us'])} us ({ratio(r['us'], ours['us'])})" for p, r in rec.items() if p != OURS]
            out.append(f"\n1-D float32 {fmt_size(nbytes)} ({mode}): ours {fmt_us(ours['us'])} us; " + "; ".join(parts))


# ----------------------------------------------------------------------------- targets

def verdict(ok) -> str:
    return "n/a" if ok is None else ("met" if ok else "MISSED")


def cpu_targets(s: Sweep) -> list[tuple[str, str, str]]:
    """Issue 2: relu(x, out=o) vs clamp_min(out=) and copy_, at 1024^2, 4096^2, 8192^2."""
    rows = []
    mode = "hot"
    numels = [1024**2, 4096**2, 8192**2]
    for dtype in s.dtypes("forward"):
        for n in numels:
            nbytes = n * ITEMSIZE[dtype]
            ours = s.us("forward", dtype, nbytes, mode, OURS)
            torch_us = s.us("forward", dtype, nbytes, mode, "clamp_min_out")
            copy_us = s.us("forward", dtype, nbytes, mode, "copy_")
            if ours is None:
                continue
            label = f"{dtype} {int(n ** 0.5)}^2"
            if torch_us:
                rows.append((f"{label}: >= 1.0x clamp_min(out=)", f"{torch_us / ours:.2f}x",
                             verdict(torch_us / ours >= 1.0)))
            if nbytes >= 64 * MiB and copy_us:
                rows.append((f"{label} ({fmt_size(nbytes)}): within 10% of copy_",
                             f"{copy_us / ours:.2f}x of copy speed", verdict(copy_us / ours >= 0.9)))
            if dtype in ("float16", "bfloat16") and n == 1024**2 and torch_us:
                rows.append((f"{label}: >= 2x torch", f"{torch_us / ours:.2f}x", verdict(torch_us / ours >= 2.0)))
    ours = s.us("forward", "float32", 4 * MiB, mode, OURS)
    sse = s.us("forward", "float32", 4 * MiB, mode, "sse_baseline")
    if ours and sse:
        rows.append((f"float32 1024^2, {s.meta.get('threads')} threads: >= 1.8x SSE baseline",
                     f"{sse / ours:.2f}x", verdict(sse / ours >= 1.8)))
    worst = None
    for m in s.modes("forward"):
        for nbytes in s.sizes("forward", "float32"):
            o, b = s.us("forward", "float32", nbytes, m, OURS), s.us("forward", "float32", nbytes, m, "sse_baseline")
            if o and b and (worst is None or b / o < worst[0]):
                worst = (b / o, nbytes, m)
    if worst:
        rows.append(("float32: never below the SSE baseline (every size, hot and cold)",
                     f"lowest {worst[0]:.2f}x at {fmt_size(worst[1])} {worst[2]}", verdict(worst[0] >= 1.0)))
    return rows


def cuda_targets(s: Sweep) -> list[tuple[str, str, str]]:
    """Issue 3's performance targets, from graph-replay GPU time (cold and hot)."""
    rows = []

    def big_sizes(dtype):
        return [b for b in s.sizes("forward", dtype) if b >= 64 * MiB]

    def worst_ratio(dtype, sizes, modes, peer, ours=OURS):
        worst = None
        for m in modes:
            for b in sizes:
                o, p = s.us("forward", dtype, b, m, ours), s.us("forward", dtype, b, m, peer)
                if o and p and (worst is None or p / o < worst[0]):
                    worst = (p / o, b, m)
        return worst

    def add(text, worst, bound):
        if worst is None:
            rows.append((text, "not measured", "n/a"))
        else:
            rows.append((text, f"lowest {worst[0]:.2f}x at {fmt_size(worst[1])} {worst[2]}", verdict(worst[0] >= bound)))

    graph_modes = [m for m in ("cold", "hot") if m in s.modes("forward")]
    for dtype in ("float32", "bfloat16"):
        add(f"{dtype} >= 64 MiB: >= 0.99x torch.relu", worst_ratio(dtype, big_sizes(dtype), graph_modes, "torch.relu"), 0.99)
        worst = None
        for m in graph_modes:
            for b in big_sizes(dtype):
                o, c = s.us("forward", dtype, b, m, OURS), s.ceiling_us("forward", dtype, b, m)
                if o and c and (worst is None or c / o < worst[0]):
                    worst = (c / o, b, m)
        add(f"{dtype} >= 64 MiB: >= 97% of the copy ceiling", worst, 0.97)
    add("float16 >= 64 MiB: >= 1.05x torch.relu", worst_ratio("float16", big_sizes("float16"), graph_modes, "torch.relu"), 1.05)
    add("int8 >= 64 MiB: >= 1.22x torch.relu", worst_ratio("int8", big_sizes("int8"), graph_modes, "torch.relu"), 1.22)
    band = [b for b in s.sizes("forward", "int8") if 8 * MiB <= b <= 16 * MiB]
    add("int8 8-16 MiB hot: >= 1.7x torch.relu", worst_ratio("int8", band, ["hot"], "torch.relu"), 1.7)
    overall = None
    for dtype in s.dtypes("forward"):
        w = worst_ratio(dtype, s.sizes("forward", dtype), graph_modes, "torch.relu")
        if w and (overall is None or w[0] < overall[0][0]):
            overall = (w, dtype)
    if overall:
        w, dtype = overall
        rows.append(("every dtype, every size: >= 0.97x torch.relu",
                     f"lowest {w[0]:.2f}x ({dtype} {fmt_size(w[1])} {w[2]})", verdict(w[0] >= 0.97)))
    add("float32 1 GiB: >= 1.35x one-block-per-row", worst_ratio("float32", [GiB], graph_modes, "row_per_block"), 1.35)
    flat = None
    for m in graph_modes:
        o = s.us("flat1d", "float32", 64 * MiB, m, OURS)
        r = s.us("flat1d", "float32", 64 * MiB, m, "row_per_block")
        if o and r and (flat is None or r / o < flat[0]):
            flat = (r / o, 64 * MiB, m)
    add("float32 1-D 64 MiB: >= 100x one-block-per-row", flat, 100)
    for peer in ("relu_out", "relu"):
        worst = None
        for nbytes in s.sizes("latency", "float32"):
            o, t = s.us("latency", "float32", nbytes, "eager", peer), s.us("latency", "float32", nbytes, "eager", "torch.relu")
            if o and t:
                worst = (o / t, nbytes)
        text = f"eager 4096 float32: {'relu(x, out=o)' if peer == 'relu_out' else 'relu(x)'} <= 1.05x torch.relu latency"
        rows.append((text, f"{worst[0]:.2f}x" if worst else "not measured",
                     verdict(worst[0] <= 1.05) if worst else "n/a"))
    return rows


def render(path: Path, dtypes=None, modes=None) -> str:
    s = Sweep(path)
    if dtypes or modes:  # filters the tables; the targets are always judged on everything
        keep = lambda k: (not dtypes or k[1] in dtypes) and (not modes or k[3] in modes or k[0] != "forward")  # noqa: E731
        full = s.table
        s_tables = {k: v for k, v in full.items() if keep(k)}
    else:
        s_tables = None
    m = s.meta
    out = [f"Sweep of {m['device_name']} ({m['device']}), torch {m['torch']}"
           + (f", CUDA {m['cuda']}" if m.get("cuda") else "")
           + f", {m['threads']} threads, kernel {m['kernel_id']}"
           + (f" ({m['cpu_isa']})" if m.get("cpu_isa") else "")
           + f", git {m['git']}, {m['date_utc']} UTC; medians of {m['repeats']} interleaved repeats; "
           + f"load average at start/end {m['loadavg_start'][0]:.1f}/{m.get('loadavg_end', [float('nan')])[0]:.1f}.",
           f"Command: `{m['command']}`"]
    shares = [r["others_cpu_share"] for r in s.records if r.get("others_cpu_share") is not None]
    if shares:
        busy = sum(1 for r in s.records if (r.get("others_cpu_share") or 0) >= 0.1 and "us" in r)
        out.append(f"Other processes' share of the cores while a point was measured: median "
                   f"{sorted(shares)[len(shares) // 2]:.3f}, max {max(shares):.3f}; {busy} measurements "
                   f"taken with more than 0.1 (after up to {max(r.get('attempts', 1) for r in s.records)} attempts).")
    targets = cuda_targets(s) if m["device"] != "cpu" else cpu_targets(s)
    out.append("\n**Targets**\n")
    out.append("| target | measured | verdict |")
    out.append("|---|---|---|")
    out += [f"| {t} | {v} | {ok} |" for t, v, ok in targets]
    if s_tables is not None:
        s.table = s_tables
    forward_tables(s, out)
    latency_table(s, out)
    backward_table(s, out)
    flat_table(s, out)
    if s.errors:
        out.append("\n**Errors recorded by the sweep**\n")
        out += [f"- {r.get('op')} {r.get('dtype')} {r.get('bytes')} {r.get('peer', '')} {r.get('mode', '')}: {r['error']}"
                for r in s.errors]
    return "\n".join(out) + "\n"


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep_json", type=Path)
    parser.add_argument("--dtypes", nargs="+", help="only these dtypes' tables (targets use everything)")
    parser.add_argument("--modes", nargs="+", help="only these modes' forward tables, e.g. cold hot")
    args = parser.parse_args()
    sys.stdout.write(render(args.sweep_json, args.dtypes, args.modes))


if __name__ == "__main__":
    main()
