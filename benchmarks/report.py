"""Markdown tables from a sweep's JSON (benchmarks/sweep.py), for PERFORMANCE.md.

    python benchmarks/report.py results/cpu/sweep.json  > results/cpu/report.md
    python benchmarks/report.py results/h200/sweep.json > results/h200/report.md
    python benchmarks/report.py results/cpu/sweep.json --dtypes float32 int8 --modes hot

Like with like: every ratio pairs two calls of the same form, on the same buffers.
  - out= against out=: relu(x, out=o) against torch.clamp_min(x, 0, out=o), o.copy_(x), the
    copy16 kernel (CUDA) and upstream's baseline, all writing the same `o` (cold mode: each
    call its own set's `o`, as cold as x);
  - allocating against allocating: relu(x) against torch.relu(x) and x.clone(), each
    writing the block the caching allocator hands back (the same block call after call);
  - compiled against compiled: torch.compile of this package's relu against
    torch.compile(torch.relu) (both allocating; sweeps before the "compile(relu)" peer have
    torch.compile(torch.relu) alone, shown as a time, compared with nothing);
  - eager against eager: the pairs above are each measured in one mode (hot, cold, eager).
One cross-form column is kept, labelled so: torch.relu(x) against relu(x, out=o), what a
caller gains or loses by switching from the first to the second. Targets are never judged
on it.

"best plain Triton" is the fastest of the sweep's plain Triton ReLU configs at each point
(an out= form, into the same `o`); the L2 band table (256 KiB .. 32 MiB, hot and rot) sets
relu(x, out=o) against the fastest of o.copy_(x), clamp_min(out=) and best plain Triton, and
relu(x) against torch.relu(x).

Ratios are peer time / our time (> 1: we are faster), except in the latency table (ours /
peer, per call). The out= "ceiling" is the faster of `o.copy_(x)` and, on CUDA, the plain
16-byte copy kernel, on the same bytes. Targets (issue 2 for the CPU, issue 3 for CUDA) are
evaluated from the same numbers, on the pairs, and printed met / MISSED.
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
OURS = "relu_out"  # ours, out= form
OURS_ALLOC = "relu"  # ours, allocating form
OURS_COMPILED = "compile(relu)"
TRITON = "triton"  # the fastest plain Triton config of a point (records triton_b<BLOCK>_w<warps>)
TRITON_PREFIX = "triton_"
L2_BAND = (256 * KiB, 32 * MiB)
L2_BAND_PEERS = ("copy_", "clamp_min_out", TRITON)  # relu(x, out=o)'s peers in the L2 band table
BASELINES = ("sse_baseline", "row_per_block")
CEILINGS = ("copy_", "copy16")  # out= copies: the ceiling of the out= forms
# Each peer's form, for sweeps written before records carried one ("form").
FORM = {
    "relu_out": "out", "clamp_min_out": "out", "copy_": "out", "copy16": "out",
    "sse_baseline": "out", "row_per_block": "out", TRITON: "out",
    "relu": "allocating", "torch.relu": "allocating", "clone": "allocating",
    "torch.compile": "allocating", "compile(relu)": "allocating",
    "relu_backward": "allocating", "threshold_backward": "allocating",
}
LABEL = {
    "relu_out": "relu(x, out=o)", "clamp_min_out": "clamp_min(out=)", "copy_": "o.copy_(x)",
    "copy16": "copy16", "sse_baseline": "SSE baseline", "row_per_block": "row_per_block",
    "relu": "relu(x)", "torch.relu": "torch.relu(x)", "clone": "x.clone()",
    "torch.compile": "torch.compile(torch.relu)", "compile(relu)": "compile(relu)",
    TRITON: "best plain Triton",
}
# (ours, the peers it is judged against): the like-with-like pairs.
PAIRS = {
    "out": (OURS, ("clamp_min_out", "copy_", "copy16", TRITON, *BASELINES)),
    "allocating": (OURS_ALLOC, ("torch.relu", "clone")),
    "compiled": (OURS_COMPILED, ("torch.compile",)),
}


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
        for rec in self.table.values():  # best plain Triton: the fastest config of the point
            configs = [r for p, r in rec.items() if p.startswith(TRITON_PREFIX)]
            if configs:
                best = min(configs, key=lambda r: r["us"])
                rec[TRITON] = dict(best, peer=TRITON, config=best["peer"])
        self.errors = [r for r in self.records if "error" in r]

    def us(self, op, dtype, nbytes, mode, peer):
        r = self.table.get((op, dtype, nbytes, mode), {}).get(peer)
        return r["us"] if r else None

    def form(self, peer: str) -> str:
        for r in self.records:
            if r.get("peer") == peer and "form" in r:
                return r["form"]
        return FORM.get(peer, "?")

    def peers(self, op, dtype=None, mode=None) -> set:
        return {p for (o, d, b, m), rec in self.table.items()
                if o == op and (dtype is None or d == dtype) and (mode is None or m == mode) for p in rec}

    def modes(self, op):
        return sorted({k[3] for k in self.table if k[0] == op}, key=["cold", "rot", "hot", "eager"].index)

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
    """One table per dtype and mode; its column groups are the pairs, never mixed."""
    for mode in s.modes("forward"):
        for dtype in s.dtypes("forward"):
            here = s.peers("forward", dtype, mode)
            out_peers = [p for p in PAIRS["out"][1] if p in here]
            alloc_peers = [p for p in PAIRS["allocating"][1] if p in here]
            compiled = OURS_COMPILED in here and "torch.compile" in here
            groups = ["out= forms (on the same `o`)"]
            if OURS_ALLOC in here:
                groups.append("allocating forms (on the allocator's block)")
            if "torch.compile" in here:
                groups.append("compiled")
            out.append(f"\n**{dtype}, {mode}**: " + " | ".join(groups)
                       + "; ratios = peer time / ours, within a form\n")
            head = ["size", "out=: relu(x, out=o) us", "GB/s", *[f"out=: vs {LABEL[p]}" for p in out_peers]]
            if OURS_ALLOC in here:
                head += ["alloc: relu(x) us", *[f"alloc: vs {LABEL[p]}" for p in alloc_peers]]
            if compiled:
                head += ["compiled: compile(relu) us", "compiled: vs torch.compile(torch.relu)"]
            elif "torch.compile" in here:
                head += ["compiled: torch.compile(torch.relu) us (no pair measured)"]
            cross = OURS in here and "torch.relu" in here
            if cross:
                head += ["cross-form: relu(x, out=o) vs torch.relu(x)"]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "---|" * len(head))
            for nbytes in s.sizes("forward", dtype):
                if sizes_filter and nbytes not in sizes_filter(dtype):
                    continue
                g = lambda p: s.us("forward", dtype, nbytes, mode, p)  # noqa: E731
                rec = s.table.get(("forward", dtype, nbytes, mode), {})
                ours = rec.get(OURS)
                cells = [fmt_size(nbytes), fmt_us(ours["us"]) if ours else "-",
                         f"{ours['gbps']:.1f}" if ours else "-"]
                cells += [ratio(g(p), g(OURS)) for p in out_peers]
                if OURS_ALLOC in here:
                    a = g(OURS_ALLOC)
                    cells += [fmt_us(a) if a else "-", *[ratio(g(p), a) for p in alloc_peers]]
                if compiled:
                    c = g(OURS_COMPILED)
                    cells += [fmt_us(c) if c else "-", ratio(g("torch.compile"), c)]
                elif "torch.compile" in here:
                    c = g("torch.compile")
                    cells += [fmt_us(c) if c else "-"]
                if cross:
                    cells.append(ratio(g("torch.relu"), g(OURS)))
                out.append("| " + " | ".join(cells) + " |")


def gap_table(s: Sweep, out: list[str], lo: int = 1 * MiB, hi: int = 16 * MiB) -> None:
    """Cold calls of lo..hi: each pair's ratio side by side with the old cross-form one."""
    if "cold" not in s.modes("forward"):
        return
    rows = []
    for dtype in s.dtypes("forward"):
        for nbytes in s.sizes("forward", dtype):
            if not lo <= nbytes <= hi:
                continue
            g = lambda p: s.us("forward", dtype, nbytes, "cold", p)  # noqa: E731
            if g(OURS) is None:
                continue
            rows.append(f"| {dtype} | {fmt_size(nbytes)} | {ratio(g('torch.relu'), g(OURS_ALLOC))} | "
                        f"{ratio(g('clamp_min_out'), g(OURS))} | {ratio(g('copy_'), g(OURS))} | "
                        f"{ratio(g('torch.relu'), g(OURS))} |")
    if rows:
        out.append(f"\n**Cold calls of {fmt_size(lo)}-{fmt_size(hi)}, pair by pair** (peer time / ours)\n")
        out.append("| dtype | size | alloc: relu(x) vs torch.relu(x) | out=: relu(x, out=o) vs clamp_min(out=) "
                   "| out=: vs o.copy_(x) | cross-form: relu(x, out=o) vs torch.relu(x) |")
        out.append("|---|---|---|---|---|---|")
        out += rows


def l2_band_table(s: Sweep, out: list[str]) -> None:
    """The L2-resident band, hot and rot: relu(x, out=o) against each out= peer and the
    fastest of them, relu(x) against torch.relu(x). Only sweeps that measured "rot" or the
    Triton peer (older sweeps have neither, and their reports stay as they were)."""
    modes = [m for m in ("hot", "rot") if m in s.modes("forward")]
    if "rot" not in modes and not any(TRITON in rec for rec in s.table.values()):
        return
    cache = s.meta.get("cache", "cache")
    out.append(f"\n**L2 band, {fmt_size(L2_BAND[0])}-{fmt_size(L2_BAND[1])}**: hot = one buffer pair; rot = "
               f"x and o sets rotated within the {cache}; us per call; best peer / ours = the fastest "
               "out= peer's time over relu(x, out=o)'s (> 1: ours is faster)\n")
    head = ["dtype", "size", "mode", "relu(x, out=o) us", *[f"{LABEL[p]} us" for p in L2_BAND_PEERS],
            "best peer / ours", "relu(x) us", "torch.relu(x) us", "torch.relu / relu(x)"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    cell = lambda v: fmt_us(v) if v is not None else "-"  # noqa: E731
    for dtype in s.dtypes("forward"):
        for nbytes in s.sizes("forward", dtype):
            if not L2_BAND[0] <= nbytes <= L2_BAND[1]:
                continue
            for mode in modes:
                rec = s.table.get(("forward", dtype, nbytes, mode), {})
                if OURS not in rec:
                    continue
                g = lambda p: rec[p]["us"] if p in rec else None  # noqa: E731
                peers = [g(p) for p in L2_BAND_PEERS]
                best = min((t for t in peers if t is not None), default=None)
                triton = cell(g(TRITON)) + (f" ({rec[TRITON]['config'].removeprefix(TRITON_PREFIX)})"
                                            if TRITON in rec else "")
                cells = [dtype, fmt_size(nbytes), mode, cell(g(OURS)), *[cell(t) for t in peers[:-1]], triton,
                         ratio(best, g(OURS)), cell(g(OURS_ALLOC)), cell(g("torch.relu")),
                         ratio(g("torch.relu"), g(OURS_ALLOC))]
                out.append("| " + " | ".join(cells) + " |")
    if s.meta.get("triton"):
        out.append(f"\nPlain Triton peer: {s.meta['triton']}.")


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
    head = ["dtype", "relu(x, out=o)", *[LABEL[p] for p in out_peers],
            *[f"out=: ours / {LABEL[p]}" for p in out_peers],
            "relu(x)", *[LABEL[p] for p in alloc_peers],
            *[f"alloc: ours / {LABEL[p]}" for p in alloc_peers],
            "cross-form: relu(x, out=o) / torch.relu(x)"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    cell = lambda v: fmt_us(v) if v is not None else "-"  # noqa: E731
    quotient = lambda a, b: f"{a / b:.2f}" if a and b else "-"  # noqa: E731
    for dtype in s.dtypes("latency"):
        for nbytes in s.sizes("latency", dtype):
            g = lambda p: s.us("latency", dtype, nbytes, mode, p)  # noqa: E731
            o, a = g(OURS), g(OURS_ALLOC)
            cells = [dtype, cell(o), *[cell(g(p)) for p in out_peers], *[quotient(o, g(p)) for p in out_peers],
                     cell(a), *[cell(g(p)) for p in alloc_peers], *[quotient(a, g(p)) for p in alloc_peers],
                     quotient(o, g("torch.relu"))]
            out.append("| " + " | ".join(cells) + " |")


def backward_table(s: Sweep, out: list[str]) -> None:
    for mode in s.modes("backward"):
        out.append(f"\n**Backward, {mode}**: relu_backward(grad, result) vs aten.threshold_backward "
                   "(both allocating; 3 tensors of the size moved)\n")
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
            parts = []
            for form, (ours_name, _) in (("out=", PAIRS["out"]), ("allocating", PAIRS["allocating"])):
                key = "out" if form == "out=" else "allocating"
                ours = rec.get(ours_name)
                if not ours:
                    continue
                peers = [f"{LABEL.get(p, p)} {fmt_us(r['us'])} us ({ratio(r['us'], ours['us'])})"
                         for p, r in rec.items() if p != ours_name and s.form(p) == key]
                parts.append(f"{form}: {LABEL[ours_name]} {fmt_us(ours['us'])} us; " + "; ".join(peers))
            if OURS in rec and "torch.relu" in rec and OURS_ALLOC not in rec:
                parts.append(f"cross-form: torch.relu(x) {fmt_us(rec['torch.relu']['us'])} us "
                             f"({ratio(rec['torch.relu']['us'], rec[OURS]['us'])} of relu(x, out=o))")
            if parts:
                out.append(f"\n1-D float32 {fmt_size(nbytes)} ({mode}): " + " | ".join(parts))


# ----------------------------------------------------------------------------- targets

def fmt_ratio(value: float, bound: float) -> str:
    """Two decimals, three where two would round a miss up to the bound (1.219 vs 1.22)."""
    return f"{value:.2f}" if (round(value, 2) >= bound) == (value >= bound) else f"{value:.3f}"


def verdict(ok) -> str:
    return "n/a" if ok is None else ("met" if ok else "MISSED")


def cpu_targets(s: Sweep) -> list[tuple[str, str, str]]:
    """Issue 2: relu(x, out=o) vs clamp_min(out=) and copy_ (out= against out=), at 1024^2,
    4096^2, 8192^2; the SSE baseline writes a given buffer too."""
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
                rows.append((f"{label}: >= 1.0x clamp_min(out=) (out=)", f"{torch_us / ours:.2f}x",
                             verdict(torch_us / ours >= 1.0)))
            if nbytes >= 64 * MiB and copy_us:
                rows.append((f"{label} ({fmt_size(nbytes)}): within 10% of copy_ (out=)",
                             f"{copy_us / ours:.2f}x of copy speed", verdict(copy_us / ours >= 0.9)))
            if dtype in ("float16", "bfloat16") and n == 1024**2:
                # Both forms: out= against clamp_min(out=), allocating against torch.relu.
                alloc = s.us("forward", dtype, nbytes, mode, OURS_ALLOC)
                torch_alloc = s.us("forward", dtype, nbytes, mode, "torch.relu")
                if torch_us:
                    rows.append((f"{label}: >= 2x torch (out=: vs clamp_min(out=))", f"{torch_us / ours:.2f}x",
                                 verdict(torch_us / ours >= 2.0)))
                if alloc and torch_alloc:
                    rows.append((f"{label}: >= 2x torch (alloc: relu(x) vs torch.relu(x))",
                                 f"{torch_alloc / alloc:.2f}x", verdict(torch_alloc / alloc >= 2.0)))
    ours = s.us("forward", "float32", 4 * MiB, mode, OURS)
    sse = s.us("forward", "float32", 4 * MiB, mode, "sse_baseline")
    if ours and sse:
        rows.append((f"float32 1024^2, {s.meta.get('threads')} threads: >= 1.8x SSE baseline (out=)",
                     f"{sse / ours:.2f}x", verdict(sse / ours >= 1.8)))
    worst = None
    for m in s.modes("forward"):
        for nbytes in s.sizes("forward", "float32"):
            o, b = s.us("forward", "float32", nbytes, m, OURS), s.us("forward", "float32", nbytes, m, "sse_baseline")
            if o and b and (worst is None or b / o < worst[0]):
                worst = (b / o, nbytes, m)
    if worst:
        rows.append(("float32: never below the SSE baseline (every size, hot and cold; out=)",
                     f"lowest {worst[0]:.2f}x at {fmt_size(worst[1])} {worst[2]}", verdict(worst[0] >= 1.0)))
    return rows


def cuda_targets(s: Sweep) -> list[tuple[str, str, str]]:
    """Issue 3's performance targets, from graph-replay GPU time (cold and hot), each judged on
    both like-with-like pairs: allocating (relu(x) vs torch.relu(x)) and out= (relu(x, out=o)
    vs clamp_min(x, 0, out=o), the same TensorIterator kernel as torch.relu writing a given
    buffer)."""
    rows = []
    pairs = (("alloc", OURS_ALLOC, "torch.relu", "relu(x) vs torch.relu(x)"),
             ("out=", OURS, "clamp_min_out", "relu(x, out=o) vs clamp_min(out=)"))

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
            rows.append((text, f"lowest {fmt_ratio(worst[0], bound)}x at {fmt_size(worst[1])} {worst[2]}",
                         verdict(worst[0] >= bound)))

    def add_pairs(text, dtype, sizes, modes, bound):
        for tag, ours, peer, what in pairs:
            add(f"{text} ({tag}: {what})", worst_ratio(dtype, sizes, modes, peer, ours), bound)

    graph_modes = [m for m in ("cold", "hot") if m in s.modes("forward")]
    for dtype in ("float32", "bfloat16"):
        add_pairs(f"{dtype} >= 64 MiB: >= 0.99x torch", dtype, big_sizes(dtype), graph_modes, 0.99)
        worst = None
        for m in graph_modes:
            for b in big_sizes(dtype):
                o, c = s.us("forward", dtype, b, m, OURS), s.ceiling_us("forward", dtype, b, m)
                if o and c and (worst is None or c / o < worst[0]):
                    worst = (c / o, b, m)
        add(f"{dtype} >= 64 MiB: >= 97% of the copy ceiling (out=: relu(x, out=o) vs o.copy_(x), copy16)", worst, 0.97)
    add_pairs("float16 >= 64 MiB: >= 1.05x torch", "float16", big_sizes("float16"), graph_modes, 1.05)
    add_pairs("int8 >= 64 MiB: >= 1.22x torch", "int8", big_sizes("int8"), graph_modes, 1.22)
    band = [b for b in s.sizes("forward", "int8") if 8 * MiB <= b <= 16 * MiB]
    add_pairs("int8 8-16 MiB hot: >= 1.7x torch", "int8", band, ["hot"], 1.7)
    for tag, ours, peer, what in pairs:
        overall = None
        for dtype in s.dtypes("forward"):
            w = worst_ratio(dtype, s.sizes("forward", dtype), graph_modes, peer, ours)
            if w and (overall is None or w[0] < overall[0][0]):
                overall = (w, dtype)
        if overall:
            w, dtype = overall
            rows.append((f"every dtype, every size: >= 0.97x torch ({tag}: {what})",
                         f"lowest {fmt_ratio(w[0], 0.97)}x ({dtype} {fmt_size(w[1])} {w[2]})", verdict(w[0] >= 0.97)))
    add("float32 1 GiB: >= 1.35x one-block-per-row (out=)", worst_ratio("float32", [GiB], graph_modes, "row_per_block"), 1.35)
    flat = None
    for m in graph_modes:
        o = s.us("flat1d", "float32", 64 * MiB, m, OURS)
        r = s.us("flat1d", "float32", 64 * MiB, m, "row_per_block")
        if o and r and (flat is None or r / o < flat[0]):
            flat = (r / o, 64 * MiB, m)
    add("float32 1-D 64 MiB: >= 100x one-block-per-row (out=)", flat, 100)
    for ours, peer, text in ((OURS, "clamp_min_out", "relu(x, out=o) <= 1.05x clamp_min(out=)"),
                             (OURS_ALLOC, "torch.relu", "relu(x) <= 1.05x torch.relu(x)")):
        worst = None
        for nbytes in s.sizes("latency", "float32"):
            o, t = s.us("latency", "float32", nbytes, "eager", ours), s.us("latency", "float32", nbytes, "eager", peer)
            if o and t:
                worst = (o / t, nbytes)
        rows.append((f"eager 4096 float32: {text} latency", f"{worst[0]:.2f}x" if worst else "not measured",
                     verdict(worst[0] <= 1.05) if worst else "n/a"))
    return rows


def old_rotation_note(s: Sweep) -> str:
    """Sweeps written before records carried a form sized the cold rotation on x + o: the
    allocating forms, which rotate x alone, read inputs rotated over half the footprint."""
    cache = s.meta.get("cache_bytes")
    short = {}
    for (op, dtype, nbytes, mode), rec in s.table.items():
        r = rec.get(OURS)
        if op == "forward" and mode == "cold" and r and cache and r.get("footprint_bytes"):
            share = r["footprint_bytes"] / 2 / cache
            if share < 1.5:
                short[nbytes] = min(share, short.get(nbytes, share))
    text = ("Cold rotation of this sweep: sized on x + o. The out= forms read and write sets "
            "together over 1.5x the cache; the allocating forms rotate x alone, over half that")
    if short:
        text += (f": {min(short.values()):.2f}-{max(short.values()):.2f}x the {s.meta.get('cache', 'cache')} "
                 f"at {fmt_size(min(short))}-{fmt_size(max(short))}, so their inputs may partly hit in it")
    return text + (". Each pair shares its rotation. Newer sweeps (meta cold_rotation) rotate the inputs of "
                   "every form over > 1.5x the cache.")


def display_path(path: Path) -> str:
    """The path as a command in the repository root would name it."""
    root = Path(__file__).resolve().parent.parent
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)


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
           f"Command: `{m['command']}`",
           f"Tables: `python benchmarks/report.py {display_path(path)}`. Pairs: out= against out= (the "
           "same `o`), allocating against allocating (the allocator's block), compiled against compiled; "
           "one column, labelled cross-form, compares torch.relu(x) with relu(x, out=o)."]
    if "cold_rotation" not in m and "cold" in s.modes("forward"):
        out.append(old_rotation_note(s))
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
    if m["device"] != "cpu":
        gap_table(s, out)
    l2_band_table(s, out)
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
