"""Study: misaligned pairs on CUDA. Question, answer and results: benchmarks/studies/misaligned.md.

Two builds of the package (and optionally the noarch Triton variant) side by side in one
process, on pairs whose addresses differ modulo 16 bytes: x = a view `d` bytes into an aligned
buffer, out aligned (a fresh allocation, or a given `o`), so x and out differ by d.

    python benchmarks/studies/misaligned.py --new build/<variant> --old <main>/build/<variant> \
        [--build twoload=<dir>/build/<variant>] [--noarch build/torch-cuda] --out $OUT \
        [--placements 3] [--max-bytes N] [--time-limit-s 150]
    python benchmarks/studies/misaligned.py --table misaligned.json [--as-new twoload]  # tables, anywhere

Per point (dtype, input size, d; "aligned" rows have d = 0), GPU time per call from CUDA-graph
replay (benchmarks/timing.py), interleaved, medians of the repeats, "hot" (one set) and
"cold" (sets rotated until the inputs exceed 1.5x the L2):
  allocating: torch.relu(x), new relu(x), old relu(x), [noarch relu(x)];
  out=:       torch.clamp_min(x, 0, out=o), new relu(x, out=o), old relu(x, out=o),
              [noarch relu(x, out=o)], and the ceiling "aligned copy_": o.copy_(xa) with xa
              the same bytes at offset 0;
  backward (float32/bfloat16, a few sizes): ops.relu_backward(g, r) of each build with g
              shifted by d and r aligned, against aten.threshold_backward.
Every peer is checked against torch.where(x > 0, x, 0) (NaN-free data) before it is timed.
Placements: an allocating peer writes the block its graph's private pool hands it, a
different one per peer; where that block lies against x moved a peer by 2-3% at DRAM sizes
in the first run (aligned pairs: new relu(x) 130.7 us, old 127.6, the same kernel). With
--placements K every mode is captured K times: the peers' capture order as listed, reversed,
then shuffled (run 2 of the study rotated it instead, which kept each peer's neighbours);
the tables take each peer's median over the placements. out= peers share `o` and `x`.
Writes misaligned.json (every record) after every point.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import GiB, KiB, MiB, GraphSampler, cold_sets, git_revision, interleaved  # noqa: E402

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int8": torch.int8,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "float64": torch.float64,
}
# Every offset at these sizes; a few elsewhere.
ALL_OFFSET_SIZES = [256 * MiB, 1 * MiB]
SIZES = [256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB]
BACKWARD_SIZES = [1 * MiB, 64 * MiB, 256 * MiB]


def load(variant_dir: Path):
    from kernels import get_local_kernel

    backend = json.loads((variant_dir / "metadata.json").read_text())["backend"]["type"]
    return get_local_kernel(variant_dir, backend=backend)


def offsets_for(itemsize: int, nbytes: int, everywhere: bool) -> list[int]:
    every = list(range(itemsize, 16, itemsize))
    if everywhere or nbytes in ALL_OFFSET_SIZES:
        return every
    return sorted({itemsize, 8, 16 - itemsize} & set(every))


def fill(t: torch.Tensor) -> None:
    if t.dtype.is_floating_point:
        t.copy_(torch.randn(t.shape, device=t.device, dtype=torch.float32).to(t.dtype))
    else:
        t.copy_(torch.randint(-128, 128, t.shape, device=t.device, dtype=torch.int32).to(t.dtype))


def expected_relu(x: torch.Tensor) -> torch.Tensor:
    if x.dtype.itemsize == 1 and x.dtype.is_floating_point:  # float8: compare in float32
        return torch.where(x.float() > 0, x.float(), 0.0).to(x.dtype)
    return torch.where(x > 0, x, torch.zeros_like(x))


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def peers_forward(builds: dict, dtype: torch.dtype) -> dict:
    """name -> (form, call(set) -> result or None, checks)."""
    peers = {}
    if not (dtype.itemsize == 1 and dtype.is_floating_point):  # torch has no float8 relu
        peers["torch.relu(x)"] = ("allocating", lambda s: torch.relu(s["x"]))
        peers["clamp_min(out=)"] = ("out", lambda s: torch.clamp_min(s["x"], 0, out=s["o"]))
    for name, k in builds.items():
        peers[f"{name} relu(x)"] = ("allocating", lambda s, k=k: k.relu(s["x"]))
        peers[f"{name} relu(x, out=)"] = ("out", lambda s, k=k: k.relu(s["x"], out=s["o"]))
    peers["aligned copy_"] = ("copy", lambda s: s["o"].copy_(s["xa"]))
    return peers


def peers_backward(builds: dict) -> dict:
    peers = {"threshold_backward": ("allocating", lambda s: torch.ops.aten.threshold_backward(s["g"], s["r"], 0))}
    for name, k in builds.items():
        ops = k._ops.ops
        peers[f"{name} relu_backward"] = ("allocating", lambda s, ops=ops: ops.relu_backward(s["g"], s["r"]))
    return peers


def make_sets(count: int, numel: int, dtype, shift_elems: int, roles: list[str]) -> list[dict]:
    """Each set: role tensors of `numel`; "x"/"g" start shift_elems into an aligned row
    ("xa" is the same row at offset 0), the others are aligned."""
    pad = 16 // dtype.itemsize
    pools = {r: torch.empty((count, numel + pad), dtype=dtype, device="cuda") for r in roles}
    first = pools[roles[0]][0]
    fill(first)
    for r in roles:
        pools[r].copy_(first.expand_as(pools[r]))
    sets = []
    for i in range(count):
        s = {}
        for r in roles:
            if r in ("x", "g"):
                s[r] = pools[r][i, shift_elems:shift_elems + numel]
                s[r + "a"] = pools[r][i, :numel]
            else:
                s[r] = pools[r][i, :numel]
        if "r" in s:
            s["r"].clamp_(min=0) if not (dtype.itemsize == 1 and dtype.is_floating_point) else None
        sets.append(s)
    return sets


def check(name: str, form: str, call, s: dict) -> None:
    if "g" in s:
        want = torch.where(s["r"] > 0, s["g"], torch.zeros_like(s["g"]))
    elif form == "copy":
        want = s["xa"].clone()
    else:
        want = expected_relu(s["x"])
    if form in ("out", "copy"):
        s["o"].fill_(7)
        call(s)
        got = s["o"]
    else:
        got = call(s)
    if not same(got, want):
        raise AssertionError(f"{name}: differs from the reference")


def run_point(builds, op, dtype_name, nbytes, d, modes, l2_bytes, repeats, calls, placements) -> list[dict]:
    dtype = DTYPES[dtype_name]
    numel = nbytes // dtype.itemsize
    roles = ["g", "r"] if op == "backward" else ["x", "o"]
    peers = peers_backward(builds) if op == "backward" else peers_forward(builds, dtype)
    counts = {"hot": 1}
    if "cold" in modes:
        counts["cold"] = cold_sets(nbytes * (2 if op == "backward" else 1), l2_bytes, 64)
    sets = make_sets(max(counts.values()), numel, dtype, d // dtype.itemsize, roles)
    base = dict(op=op, dtype=dtype_name, bytes=nbytes, offset_bytes=d)
    records, good = [], {}
    for name, (form, call) in peers.items():
        try:
            check(name, form, call, dict(sets[0]))
            good[name] = (form, call)
        except Exception as exc:
            records.append(dict(base, peer=name, mode="check", error=f"{type(exc).__name__}: {exc}"))
    torch.cuda.synchronize()
    names = list(good)
    for mode, count in counts.items():
        for placement in range(placements):
            order = list(names)  # capture order: where the allocating peers' pools land
            if placement % 2:
                order.reverse()
            if placement >= 2:
                random.Random(placement).shuffle(order)
            samplers = {}
            for name in order:
                n = count * math.ceil(calls / count)
                samplers[name] = GraphSampler(good[name][1], sets[:count], n)
            for name, values in interleaved(samplers, repeats).items():
                us = statistics.median(values) * 1e6
                records.append(dict(base, peer=name, form=good[name][0], mode=mode, sets=count, placement=placement,
                                    us=round(us, 4), samples_us=[round(v * 1e6, 4) for v in values]))
            del samplers
    del sets
    if nbytes >= 256 * MiB:
        torch.cuda.empty_cache()
    return records


def medians_by_point(data: dict, as_new: str | None = None) -> dict:
    """(op, dtype, bytes, offset, mode) -> {peer: median us over the placements}. as_new: the
    build to show as "new" (the one shipped), the run's "new" then shown as "new-run"."""
    times: dict = {}
    for r in data["records"]:
        if "us" in r:
            key = (r["op"], r["dtype"], r["bytes"], r["offset_bytes"], r["mode"])
            peer = r["peer"]
            if as_new:
                build, _, rest = peer.partition(" ")
                peer = {"new": "new-run", as_new: "new"}.get(build, build) + " " + rest if rest else peer
            times.setdefault(key, {}).setdefault(peer, []).append(r["us"])
    return {k: {p: statistics.median(v) for p, v in peers.items()} for k, peers in times.items()}


def size_label(nbytes: int) -> str:
    return f"{nbytes // GiB} GiB" if nbytes >= GiB else (f"{nbytes // MiB} MiB" if nbytes >= MiB else f"{nbytes // KiB} KiB")


def tables(data: dict, as_new: str | None = None) -> str:
    """Per dtype, size and mode, the worst ratio over the offsets d >= 1 (higher is better for
    us): torch.relu / new relu(x), clamp_min(out=) / new relu(x, out=), the aligned copy / new
    (both forms), the old build / new; and on aligned pairs (d = 0) new against old."""
    t = medians_by_point(data, as_new)
    extra = sorted({p.split(" ")[0] for peers in t.values() for p in peers} - {"new", "old", "torch.relu(x)",
                                                                               "clamp_min(out=)", "aligned", "threshold_backward"})
    lines = []
    head = ("| dtype | size | mode | d | torch.relu / relu(x) | clamp_min / relu(out=) | copy / relu(x) | "
            "copy / relu(out=) | old / new (x) | aligned: old / new (x) | aligned: old / new (out=) | relu(x, out=) us | "
            + " | ".join(f"{e} / new (out=)" for e in extra) + " |")
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    keys = sorted({(k[1], k[2], k[4]) for k in t if k[0] == "forward"}, key=lambda k: (k[1], k[0], k[2]))
    for dtype, nbytes, mode in keys:
        aligned = t.get(("forward", dtype, nbytes, 0, mode), {})
        rows = [(k[3], v) for k, v in t.items() if k[0] == "forward" and (k[1], k[2], k[4]) == (dtype, nbytes, mode) and k[3]]
        if not rows:
            continue
        def worst(num, den, use_aligned_num=False):
            vals = [((aligned if use_aligned_num else v).get(num), v.get(den), d) for d, v in rows]
            vals = [(a / b, d) for a, b, d in vals if a and b]
            return min(vals) if vals else None
        def fmt(w):
            return f"{w[0]:.3f} (d={w[1]})" if w else "-"
        cells = [fmt(worst("torch.relu(x)", "new relu(x)")), fmt(worst("clamp_min(out=)", "new relu(x, out=)")),
                 fmt(worst("aligned copy_", "new relu(x)")), fmt(worst("aligned copy_", "new relu(x, out=)")),
                 fmt(worst("old relu(x)", "new relu(x)"))]
        a_new, a_old = aligned.get("new relu(x)"), aligned.get("old relu(x)")
        o_new, o_old = aligned.get("new relu(x, out=)"), aligned.get("old relu(x, out=)")
        cells += [f"{a_old / a_new:.3f}" if a_new and a_old else "-", f"{o_old / o_new:.3f}" if o_new and o_old else "-"]
        outs = [v["new relu(x, out=)"] for d, v in rows if "new relu(x, out=)" in v]
        cells.append(f"{min(outs):.2f}-{max(outs):.2f}" if outs else "-")
        cells += [fmt(worst(f"{e} relu(x, out=)", "new relu(x, out=)")) for e in extra]
        lines.append(f"| {dtype} | {size_label(nbytes)} | {mode} | {len(rows)} offsets | " + " | ".join(cells) + " |")
    back = [(k, v) for k, v in sorted(t.items()) if k[0] == "backward"]
    if back:
        lines += ["", "| backward | size | d (grad_out) | threshold_backward us | " + " | ".join(
            sorted({p for _, v in back for p in v} - {"threshold_backward"})) + " |"]
        names = sorted({p for _, v in back for p in v} - {"threshold_backward"})
        lines.append("|" + "---|" * (4 + len(names)))
        for k, v in back:
            lines.append(f"| {k[1]} | {size_label(k[2])} | {k[3]} | {v.get('threshold_backward', 0):.2f} | "
                         + " | ".join(f"{v[n]:.2f}" if n in v else "-" for n in names) + " |")
    return "\n".join(lines)


def plan(args) -> list[tuple]:
    points = []
    dtypes = args.dtypes or list(DTYPES)
    sizes = [s for s in SIZES if args.max_bytes is None or s <= args.max_bytes]
    # The most telling points first, so that a cut-short run still answers: every offset at
    # 256 MiB and 1 MiB, then 16 and 64 MiB, then the other sizes.
    first = ALL_OFFSET_SIZES + [16 * MiB, 64 * MiB]
    order = [s for s in first if s in sizes] + [s for s in sizes if s not in first]
    for nbytes in order:
        for name in dtypes:
            itemsize = DTYPES[name].itemsize
            modes = ["hot"] if nbytes >= GiB else ["hot", "cold"]
            for d in [0] + offsets_for(itemsize, nbytes, args.every_offset):
                points.append(("forward", name, nbytes, d, modes))
    for nbytes in BACKWARD_SIZES:
        if args.max_bytes is None or nbytes <= args.max_bytes:
            for name in ("float32", "bfloat16"):
                if name in dtypes:
                    for d in (0, DTYPES[name].itemsize):
                        points.append(("backward", name, nbytes, d, ["hot"]))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--new", type=Path, help="variant directory of the build under study")
    parser.add_argument("--old", type=Path, help="variant directory of the previous build")
    parser.add_argument("--noarch", type=Path, help="the noarch torch-cuda variant directory (Triton)")
    parser.add_argument("--build", action="append", default=[], metavar="NAME=DIR",
                        help="another build to time beside new and old (a study variant)")
    parser.add_argument("--placements", type=int, default=1, help="captures per mode, capture order rotated")
    parser.add_argument("--revision", default=None, help="the source revision of --new (no .git on the device)")
    parser.add_argument("--table", type=Path, help="print the tables of a misaligned.json and exit")
    parser.add_argument("--as-new", help="--table: show this --build as \"new\" (the run's new as \"new-run\")")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES))
    parser.add_argument("--max-bytes", type=int, default=None)
    parser.add_argument("--every-offset", action="store_true", help="every offset at every size")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20, help="calls per graph")
    parser.add_argument("--time-limit-s", type=float, default=None)
    args = parser.parse_args()
    if args.table:
        print(tables(json.loads(args.table.read_text()), args.as_new))
        return
    builds = {"new": load(args.new)}
    if args.old:
        builds["old"] = load(args.old)
    for spec in args.build:
        name, _, path = spec.partition("=")
        builds[name] = load(Path(path))
    if args.noarch:
        builds["noarch"] = load(args.noarch)
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    args.out.mkdir(parents=True, exist_ok=True)
    out_file = args.out / "misaligned.json"
    meta = dict(command="python benchmarks/studies/misaligned.py " + " ".join(sys.argv[1:]),
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
                git=args.revision or git_revision(), placements=args.placements, device_name=torch.cuda.get_device_name(0), torch=torch.__version__,
                cuda=torch.version.cuda, l2_bytes=l2_bytes, repeats=args.repeats, calls_per_graph=args.calls,
                builds={n: str(p) for n, p in (("new", args.new), ("old", args.old), ("noarch", args.noarch)) if p})
    records: list[dict] = []
    started = time.time()
    points = plan(args)
    for i, (op, name, nbytes, d, modes) in enumerate(points):
        if args.time_limit_s and time.time() - started > args.time_limit_s:
            meta["stopped_early"] = f"after {i} of {len(points)} points (--time-limit-s {args.time_limit_s})"
            break
        try:
            records.extend(run_point(builds, op, name, nbytes, d, modes, l2_bytes, args.repeats, args.calls,
                                     args.placements))
        except Exception as exc:
            records.append(dict(op=op, dtype=name, bytes=nbytes, offset_bytes=d,
                                error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc(limit=3)))
            torch.cuda.empty_cache()
        meta["seconds"] = round(time.time() - started, 1)
        out_file.write_text(json.dumps({"meta": meta, "records": records}, indent=0) + "\n")
        print(f"{i + 1}/{len(points)} {op} {name} {nbytes} d={d} {time.time() - started:.0f}s", flush=True)
    errors = [r for r in records if "error" in r]
    print(f"{len(records) - len(errors)} timings, {len(errors)} errors -> {out_file}")
    for r in errors[:20]:
        print("  ", r)


if __name__ == "__main__":
    main()
