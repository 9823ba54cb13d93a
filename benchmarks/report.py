"""Markdown tables from a sweep's JSON (benchmarks/sweep.py).

    python benchmarks/report.py results/<machine>/sweep.json > results/<machine>/report.md
    python benchmarks/report.py results/<machine>/sweep.json --dtypes float32 int8 --modes hot

Like with like: every ratio pairs two calls of the same form, on the same buffers.
  - out= against out=: relu(x, out=o) against torch.clamp_min(x, 0, out=o), o.copy_(x), the
    copy16 kernel (CUDA), upstream's baseline and the plain Triton ReLU, all writing the same `o`;
  - allocating against allocating: relu(x) against torch.relu(x), x.clone() and the plain
    Triton ReLU allocating, each writing the block the caching allocator hands back;
  - compiled against compiled: torch.compile of this package's relu against
    torch.compile(torch.relu) (both allocating).
"best plain Triton" is the fastest of the plain Triton configs at each point, per form. The L2
band table (256 KiB .. 32 MiB, hot, rot and cold) gives, per point and form, our time, the
fastest peer of that form and best / ours (below 1: a peer is faster).

Ratios are peer time / our time (> 1: we are faster), except in the latency table (ours /
peer, per call). benchmarks/summary.py gives each area's ratios as ranges.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import KiB, MiB, fmt_size  # noqa: E402

DTYPE_ORDER = ["float32", "float16", "bfloat16", "int8", "float64", "int16", "int32", "int64", "uint8"]
OURS, OURS_ALLOC, OURS_COMPILED = "relu_out", "relu", "compile(relu)"
TRITON, TRITON_ALLOC = "triton", "triton_alloc"  # the fastest plain Triton config of a point, per form
L2_BAND = (256 * KiB, 32 * MiB)
BASELINES = ("sse_baseline", "row_per_block")
LABEL = {
    "relu_out": "relu(x, out=o)", "clamp_min_out": "clamp_min(out=)", "copy_": "o.copy_(x)",
    "copy16": "copy16", "sse_baseline": "SSE baseline", "row_per_block": "row_per_block",
    "relu": "relu(x)", "torch.relu": "torch.relu(x)", "clone": "x.clone()",
    "torch.compile": "torch.compile(torch.relu)", "compile(relu)": "compile(relu)",
    TRITON: "best plain Triton", TRITON_ALLOC: "best plain Triton, allocating",
}
# (ours, the peers it is judged against): the like-with-like pairs.
PAIRS = {
    "out": (OURS, ("clamp_min_out", "copy_", "copy16", TRITON, *BASELINES)),
    "allocating": (OURS_ALLOC, ("torch.relu", "clone", TRITON_ALLOC)),
    "compiled": (OURS_COMPILED, ("torch.compile",)),
}


def fmt_us(us: float) -> str:
    return f"{us:.2f}" if us < 100 else f"{us:.0f}"


class Sweep:
    def __init__(self, path: Path):
        data = json.loads(Path(path).read_text())
        self.meta, self.records = data["meta"], data["records"]
        self.table: dict[tuple, dict[str, dict]] = defaultdict(dict)  # (op, dtype, bytes, mode) -> {peer: record}
        for r in self.records:
            if "us" in r:
                self.table[(r["op"], r["dtype"], r["bytes"], r["mode"])][r["peer"]] = r
        for rec in self.table.values():  # best plain Triton, per form: the fastest config of the point
            for best, prefix in ((TRITON, "triton_b"), (TRITON_ALLOC, "triton_alloc_b")):
                configs = [r for p, r in rec.items() if p.startswith(prefix)]
                if configs:
                    fastest = min(configs, key=lambda r: r["us"])
                    rec[best] = dict(fastest, peer=best, config=fastest["peer"].removeprefix(prefix[:-1]))
        self.errors = [r for r in self.records if "error" in r]

    def us(self, op, dtype, nbytes, mode, peer):
        r = self.table.get((op, dtype, nbytes, mode), {}).get(peer)
        return r["us"] if r else None

    def peers(self, op, dtype=None, mode=None) -> set:
        return {p for (o, d, b, m), rec in self.table.items()
                if o == op and (dtype is None or d == dtype) and (mode is None or m == mode) for p in rec}

    def modes(self, op):
        return sorted({k[3] for k in self.table if k[0] == op}, key=["cold", "rot", "hot", "eager"].index)

    def dtypes(self, op):
        return sorted({k[1] for k in self.table if k[0] == op}, key=DTYPE_ORDER.index)

    def sizes(self, op, dtype):
        return sorted({k[2] for k in self.table if k[0] == op and k[1] == dtype})


def ratio(peer_us, ours_us) -> str:
    return f"{peer_us / ours_us:.2f}x" if peer_us is not None and ours_us else "-"


def table(out: list[str], head: list[str], rows: list[list[str]]) -> None:
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


def forward_tables(s: Sweep, out: list[str]) -> None:
    """One table per dtype and mode; its column groups are the pairs, never mixed."""
    for mode in s.modes("forward"):
        for dtype in s.dtypes("forward"):
            here = s.peers("forward", dtype, mode)
            groups = {form: [p for p in peers if p in here] for form, (_, peers) in PAIRS.items()}
            out.append(f"\n**{dtype}, {mode}**: ratios = peer time / ours, within a form (out= on the same `o`, "
                       "allocating on the allocator's block, compiled against compiled)\n")
            head = ["size", "out=: relu(x, out=o) us", "GB/s", *[f"out=: vs {LABEL[p]}" for p in groups["out"]]]
            for form in ("allocating", "compiled"):
                ours = PAIRS[form][0]
                if ours in here:
                    head += [f"{LABEL[ours]} us", *[f"{form}: vs {LABEL[p]}" for p in groups[form]]]
            rows = []
            for nbytes in s.sizes("forward", dtype):
                g = lambda p: s.us("forward", dtype, nbytes, mode, p)  # noqa: E731
                rec = s.table.get(("forward", dtype, nbytes, mode), {})
                cells = [fmt_size(nbytes), fmt_us(g(OURS)) if g(OURS) else "-",
                         f"{rec[OURS]['gbps']:.1f}" if OURS in rec else "-", *[ratio(g(p), g(OURS)) for p in groups["out"]]]
                for form in ("allocating", "compiled"):
                    ours = PAIRS[form][0]
                    if ours in here:
                        cells += [fmt_us(g(ours)) if g(ours) else "-", *[ratio(g(p), g(ours)) for p in groups[form]]]
                rows.append(cells)
            table(out, head, rows)


def l2_band_table(s: Sweep, out: list[str]) -> None:
    """The L2 band, per point and mode: each form's time, its fastest peer and best / ours."""
    rows = []
    for dtype in s.dtypes("forward"):
        for nbytes in s.sizes("forward", dtype):
            if not L2_BAND[0] <= nbytes <= L2_BAND[1]:
                continue
            for mode in [m for m in ("hot", "rot", "cold") if m in s.modes("forward")]:
                rec = s.table.get(("forward", dtype, nbytes, mode), {})
                if OURS not in rec and OURS_ALLOC not in rec:
                    continue
                cells = [dtype, fmt_size(nbytes), mode]
                for form in ("out", "allocating"):
                    ours, peers = PAIRS[form][0], [p for p in PAIRS[form][1] if p in rec and p not in BASELINES]
                    best = min(peers, key=lambda p: rec[p]["us"], default=None)
                    name = "-" if best is None else LABEL[best] + (f" ({rec[best]['config']})" if "config" in rec[best] else "")
                    cells += [fmt_us(rec[ours]["us"]) if ours in rec else "-", name,
                              fmt_us(rec[best]["us"]) if best else "-",
                              f"{rec[best]['us'] / rec[ours]['us']:.2f}" if best and ours in rec else "-"]
                rows.append(cells)
    if not rows or "rot" not in s.modes("forward"):
        return
    out.append(f"\n**L2 band, {fmt_size(L2_BAND[0])}-{fmt_size(L2_BAND[1])}**: hot = one buffer pair; rot = sets rotated "
               f"within the {s.meta.get('cache', 'cache')}; cold = rotated past 1.5x it; us per call; best / ours = the "
               "fastest peer of the form over ours (below 1: that peer is faster)\n")
    table(out, ["dtype", "size", "mode", "relu(x, out=o) us", "best out= peer", "its us", "best / ours",
                "relu(x) us", "best allocating peer", "its us", "best / ours"], rows)
    out.append(f"\nPlain Triton peer: {s.meta.get('triton_peer', s.meta.get('triton'))}.")


def latency_table(s: Sweep, out: list[str]) -> None:
    modes = s.modes("latency")
    if not modes:
        return
    mode = modes[0]
    here = s.peers("latency", mode=mode)
    out_peers = [p for p in ("clamp_min_out", "copy_") if p in here]
    alloc_peers = [p for p in ("torch.relu", "clone") if p in here]
    out.append(f"\n**Eager per-call latency, 4096 elements, host-timed ({mode})**: us per call; "
               "ratios = ours / peer (below 1: ours is cheaper), within a form\n")
    quotient = lambda a, b: f"{a / b:.2f}" if a and b else "-"  # noqa: E731
    cell = lambda v: fmt_us(v) if v is not None else "-"  # noqa: E731
    rows = []
    for dtype in s.dtypes("latency"):
        for nbytes in s.sizes("latency", dtype):
            g = lambda p: s.us("latency", dtype, nbytes, mode, p)  # noqa: E731
            o, a = g(OURS), g(OURS_ALLOC)
            rows.append([dtype, cell(o), *[cell(g(p)) for p in out_peers], *[quotient(o, g(p)) for p in out_peers],
                         cell(a), *[cell(g(p)) for p in alloc_peers], *[quotient(a, g(p)) for p in alloc_peers]])
    table(out, ["dtype", "relu(x, out=o)", *[LABEL[p] for p in out_peers], *[f"out=: ours / {LABEL[p]}" for p in out_peers],
                "relu(x)", *[LABEL[p] for p in alloc_peers], *[f"alloc: ours / {LABEL[p]}" for p in alloc_peers]], rows)


def pair_table(s: Sweep, out: list[str], op: str, title: str, ours: str, peer: str) -> None:
    for mode in s.modes(op):
        rows = []
        for dtype in s.dtypes(op):
            for nbytes in s.sizes(op, dtype):
                rec = s.table.get((op, dtype, nbytes, mode), {})
                if ours in rec and peer in rec:
                    rows.append([dtype, fmt_size(nbytes), fmt_us(rec[ours]["us"]), f"{rec[ours]['gbps']:.1f}",
                                 fmt_us(rec[peer]["us"]), ratio(rec[peer]["us"], rec[ours]["us"])])
        if rows:
            out.append(f"\n**{title}, {mode}**: {LABEL.get(ours, ours)} against {LABEL.get(peer, peer)}\n")
            table(out, ["dtype", "size", "ours us", "GB/s", "peer us", "peer / ours"], rows)


def render(path: Path, dtypes=None, modes=None) -> str:
    s = Sweep(path)
    m = s.meta
    out = [f"Sweep of {m['device_name']} ({m['device']}), torch {m['torch']}" + (f", CUDA {m['cuda']}" if m.get("cuda") else "")
           + f", {m['threads']} threads, kernel {m['kernel_id']}" + (f" ({m['cpu_isa']})" if m.get("cpu_isa") else "")
           + f", git {m['git']}, {m['date_utc']} UTC; medians of {m['repeats']} interleaved repeats; load average at "
           f"start/end {m['loadavg_start'][0]:.1f}/{m.get('loadavg_end', [float('nan')])[0]:.1f}.",
           f"Command: `{m['command']}`"]
    shares = [r["others_cpu_share"] for r in s.records if r.get("others_cpu_share") is not None]
    if shares:
        out.append(f"Other processes' share of the cores while a point was measured: median "
                   f"{sorted(shares)[len(shares) // 2]:.3f}, max {max(shares):.3f}.")
    if dtypes or modes:
        s.table = {k: v for k, v in s.table.items()
                   if (not dtypes or k[1] in dtypes) and (not modes or k[3] in modes or k[0] != "forward")}
    forward_tables(s, out)
    l2_band_table(s, out)
    latency_table(s, out)
    pair_table(s, out, "misaligned", "Misaligned x = base[1:], out= form", OURS, "clamp_min_out")
    pair_table(s, out, "misaligned", "Misaligned x = base[1:], allocating form", OURS_ALLOC, "torch.relu")
    pair_table(s, out, "backward", "Backward (3 tensors moved)", "relu_backward", "threshold_backward")
    pair_table(s, out, "flat1d", "1-D float32 (upstream's launch: one block)", OURS, "row_per_block")
    if s.errors:
        out.append("\n**Errors recorded by the sweep**\n")
        out += [f"- {r.get('op')} {r.get('dtype')} {r.get('bytes')} {r.get('peer', '')} {r.get('mode', '')}: {r['error']}"
                for r in s.errors]
    return "\n".join(out) + "\n"


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep_json", type=Path)
    parser.add_argument("--dtypes", nargs="+", help="only these dtypes' tables")
    parser.add_argument("--modes", nargs="+", help="only these modes' forward tables, e.g. cold hot")
    args = parser.parse_args()
    sys.stdout.write(render(args.sweep_json, args.dtypes, args.modes))


if __name__ == "__main__":
    main()
