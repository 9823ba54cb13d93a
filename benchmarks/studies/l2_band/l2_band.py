"""The L2-resident band on one CUDA GPU (made for the H200: 60 MiB L2): the product's relu
against o.copy_(x), torch.clamp_min(x, 0, out=o), torch.relu(x) and a grid of plain Triton
ReLUs, beside the study's own kernel variants (l2_band_kernels.cu), to find which launch or
loop choice makes the product slower than its peers at 256 KiB-32 MiB. README.md beside
this file says what is compared and why.

    python benchmarks/studies/l2_band/l2_band.py --build                 # the .so, here (nvcc)
    python benchmarks/studies/l2_band/l2_band.py --dry-run               # the plan, no GPU
    python benchmarks/studies/l2_band/l2_band.py --variant-dir build/l2-product/<variant>
    python benchmarks/studies/l2_band/l2_band.py --table l2_band.json    # tables from a run

Timing: GPU time per call from CUDA-graph replay, one graph of --calls calls per entry,
CUDA events around each replay, median of --replays replays. Every entry of a point (one
dtype, size and buffer mode) is captured first, then the replays are interleaved: each round
replays every graph once, in forward and reversed order on alternate rounds, so drift hits
all alike. --passes repeats the whole plan, so that two timings of one entry give the spread.
"hot": one input/output pair; "rot": pairs rotated call by call, all of them inside the L2
(--rot-budget-mib in all). Every form writes the same preallocated outputs, except the
allocating ones (torch.relu(x), relu(x)), whose output block the graph's pool hands back call
after call. Every entry but the torch peers is checked bit for bit against an independent
reference (poisoned output first) before it is timed; a failure is recorded, not fatal, and
a time guard (--time-limit-s) stops between points, the results written after every point.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
SOURCE = HERE / "l2_band_kernels.cu"
DEFAULT_LIBRARY = ROOT / ".cache" / "l2_band" / "libl2_band.so"
KIB, MIB = 1 << 10, 1 << 20

# The band of the issue, then two DRAM controls (input + output over the H200's 60 MiB L2).
BAND_SIZES = [256 * KIB, 512 * KIB, 1 * MIB, 2 * MIB, 4 * MIB, 8 * MIB, 16 * MIB, 32 * MIB]
DRAM_SIZES = [64 * MIB, 256 * MIB]
DTYPES = ["float32", "float16", "bfloat16", "int8"]
DTYPE_CODES = {"float32": 0, "float16": 1, "bfloat16": 2, "int8": 3}  # l2_band::Dtype
ELEMENT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
MODES = ["hot", "rot"]
TRITON_CONFIGS = [(block, warps) for block in (1024, 2048, 4096) for warps in (4, 8)]


def size_label(nbytes: int) -> str:
    return f"{nbytes // MIB} MiB" if nbytes >= MIB else f"{nbytes // KIB} KiB"


def parse_size(text: str) -> int:
    text = text.strip().lower().replace(" ", "")
    for suffix, scale in (("kib", KIB), ("mib", MIB), ("k", KIB), ("m", MIB)):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * scale)
    return int(text)


@dataclass(frozen=True)
class Point:
    dtype: str
    nbytes: int
    mode: str
    pairs: int


def rotated_pairs(nbytes: int, budget_bytes: int, calls: int) -> int:
    """Input/output pairs that fit in the budget together, at most one per call of a graph."""
    return min(calls, budget_bytes // (2 * nbytes))


def make_plan(dtypes, sizes, modes, calls: int, rot_budget_bytes: int) -> list[Point]:
    """The band first (every dtype and mode, smallest size first), the DRAM controls last: a
    run that the time guard cuts short keeps what the issue asks. A rotated mode needs two
    pairs at least inside the budget; above that size only hot runs."""
    plan = []
    for nbytes in sorted(sizes, key=lambda b: (b in DRAM_SIZES, b)):
        for dtype in dtypes:
            for mode in modes:
                if mode == "hot":
                    plan.append(Point(dtype, nbytes, mode, 1))
                else:
                    pairs = rotated_pairs(nbytes, rot_budget_bytes, calls)
                    if pairs >= 2:
                        plan.append(Point(dtype, nbytes, mode, pairs))
    return plan


def nvcc_command(output: Path) -> list[str]:
    # -cudart static: the library needs no libcudart of its own at load time; kernels and
    # streams are the driver's, shared with torch's runtime in the same primary context.
    return ["nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-cudart", "static", "-Xcompiler",
            "-fPIC", "-shared", f"-I{ROOT}", str(SOURCE), "-o", str(output)]


def build_library(output: Path) -> Path:
    output.parent.mkdir(parents=True, exist_ok=True)
    command = nvcc_command(output)
    print(" ".join(command), flush=True)
    subprocess.run(command, check=True)
    return output


class StudyLibrary:
    """The extern "C" launchers of l2_band_kernels.cu, through ctypes."""

    def __init__(self, path: Path):
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        self.lib.l2_band_variant_count.restype = ctypes.c_int
        self.lib.l2_band_variant_name.restype = ctypes.c_char_p
        self.lib.l2_band_variant_name.argtypes = [ctypes.c_int]
        self.lib.l2_band_variant_is_copy.restype = ctypes.c_int
        self.lib.l2_band_variant_is_copy.argtypes = [ctypes.c_int]
        self.lib.l2_band_error_string.restype = ctypes.c_char_p
        self.lib.l2_band_error_string.argtypes = [ctypes.c_int]
        self.lib.l2_band_launch.restype = ctypes.c_int
        self.lib.l2_band_launch.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                            ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
        self.names = [self.lib.l2_band_variant_name(i).decode()
                      for i in range(self.lib.l2_band_variant_count())]

    def is_copy(self, index: int) -> bool:
        return self.lib.l2_band_variant_is_copy(index) == 1

    def launch(self, index: int, dtype: str, x, o) -> None:
        import torch

        status = self.lib.l2_band_launch(index, DTYPE_CODES[dtype], x.data_ptr(), o.data_ptr(),
                                         x.numel(), torch.cuda.current_stream().cuda_stream)
        if status != 0:
            raise RuntimeError(f"{self.names[index]}: {self.lib.l2_band_error_string(status).decode()}")


def triton_relu_kernel():
    """The plain Triton ReLU of the issue (one load, where, one store; no hints): the maintained
    sweep's peer kernel, benchmarks/baselines.py, so that both time the same kernel."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import baselines  # noqa: PLC0415

    if baselines.triton is None:
        raise ImportError("triton is not importable in this Python")
    return baselines.relu_triton_kernel


def load_product(variant_dir: Path):
    """The product's public module from a built variant directory (the sys.path route)."""
    sys.path.insert(0, str(variant_dir))
    import relu  # noqa: PLC0415 (the variant's compat package)

    metadata = json.loads((variant_dir / "metadata.json").read_text())
    return relu, {"variant_dir": str(variant_dir), "id": metadata.get("id"),
                  "version": metadata.get("version"), "module": getattr(relu, "__file__", None)}


@dataclass
class Entry:
    """One timed form: kind is "peer" (torch), "product", "triton" or "study".
    make(bufs) -> fn(i) runs call i on pair i % pairs and returns the output written;
    expect: "relu" (bit-exact ReLU), "copy" (bit-exact x) or None (a torch peer: unchecked)."""

    name: str
    kind: str
    make: object
    expect: str | None
    allocating: bool = False


def make_entries(study: StudyLibrary | None, product, triton_kernel, dtype: str,
                 variants: list[str] | None = None) -> list[Entry]:
    """variants: the study variants to time, by name (None: all of them)."""
    import torch

    entries = [
        Entry("o.copy_(x)", "peer", lambda b: lambda i: b.o[i].copy_(b.x[i]), None),
        Entry("clamp_min(out=)", "peer", lambda b: lambda i: torch.clamp_min(b.x[i], 0, out=b.o[i]), None),
        Entry("torch.relu(x)", "peer", lambda b: lambda i: torch.relu(b.x[i]), None, allocating=True),
    ]
    if product is not None:
        entries.append(Entry("relu(x, out=o)", "product",
                             lambda b: lambda i: product.relu(b.x[i], out=b.o[i]), "relu"))
        entries.append(Entry("relu(x)", "product", lambda b: lambda i: product.relu(b.x[i]), "relu",
                             allocating=True))
    if triton_kernel is not None:
        for block, warps in TRITON_CONFIGS:
            def make(b, block=block, warps=warps):
                def call(i):
                    x, o = b.x[i], b.o[i]
                    triton_kernel[(triton_cdiv(x.numel(), block),)](x, o, x.numel(), BLOCK=block,
                                                                    num_warps=warps)
                    return o
                return call
            entries.append(Entry(f"triton B{block} w{warps}", "triton", make, "relu"))
    if study is not None:
        for index, name in enumerate(study.names):
            if variants is not None and name not in variants:
                continue
            def make(b, index=index):
                def call(i):
                    study.launch(index, dtype, b.x[i], b.o[i])
                    return b.o[i]
                return call
            entries.append(Entry(name, "study", make, "copy" if study.is_copy(index) else "relu"))
    return entries


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


class Buffers:
    """`pairs` input/output pairs of `nbytes` each, 256-byte aligned inside two slabs. The
    inputs hold random values with NaN, +-inf, -0.0 and +0.0 planted (floats), or every
    int8 value."""

    def __init__(self, dtype_name: str, nbytes: int, pairs: int, device: str = "cuda"):
        import torch

        dtype = getattr(torch, dtype_name)
        self.n = nbytes // ELEMENT_BYTES[dtype_name]
        stride = (self.n + 255) // 256 * 256
        generator = torch.Generator(device=device).manual_seed(nbytes + pairs)
        if dtype.is_floating_point:
            slab = torch.randn(stride * pairs, device=device, generator=generator).to(dtype)
            specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0],
                                    device=device).to(dtype)
            slab[: specials.numel()] = specials
            slab[stride * pairs - specials.numel():] = specials
        else:
            slab = torch.randint(-128, 128, (stride * pairs,), device=device, dtype=torch.int16,
                                 generator=generator).to(dtype)
        self.x_slab = slab
        self.o_slab = torch.empty_like(slab)
        self.x = [slab[p * stride: p * stride + self.n] for p in range(pairs)]
        self.o = [self.o_slab[p * stride: p * stride + self.n] for p in range(pairs)]


def bits(t):
    import torch

    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32}[t.element_size()])


def check(entry: Entry, fn, bufs: Buffers) -> None:
    """Poison the output, run call 0, compare with the reference bit for bit."""
    import torch

    bufs.o[0].view(torch.uint8).fill_(0xFF)  # NaN for the floats, -1 for int8: never a ReLU's output
    out = fn(0)
    if bufs.x[0].is_cuda:
        torch.cuda.synchronize()
    if entry.expect is None:
        return
    x = bufs.x[0]
    if entry.expect == "copy":
        reference = x
    else:
        reference = torch.where(x > 0, x, torch.zeros((), dtype=x.dtype, device=x.device))
    if out is None or out.shape != x.shape or out.dtype != x.dtype:
        raise AssertionError(f"returned {None if out is None else (out.shape, out.dtype)}")
    wrong = (bits(out) != bits(reference)).sum().item()
    if wrong:
        raise AssertionError(f"{wrong} of {x.numel()} elements differ from the reference")


def capture(fn, pairs: int, calls: int):
    import torch

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(min(pairs, 2)):
            fn(i)  # warm-up outside capture (allocator, lazy module load)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in range(calls):
            fn(c % pairs)  # an allocating form's result is dropped: its block comes back
    return graph


def time_graphs(graphs: list, calls: int, replays: int, lead_in: bool = True) -> list[list[float]]:
    """Interleaved replays: one warm-up round, then `replays` rounds, each replaying every
    graph once (forward, then reversed order on alternate rounds). us per call.
    lead_in: each round starts with an untimed replay of its first graph, so that no timed
    graph starts on an idle GPU after the round's synchronize (the first graph of a round
    then timed its own submission: o.copy_(x), first in forward rounds, up to 28% slower at
    256 KiB in the first run, results/h200/l2_band/)."""
    import torch

    for g in graphs:
        g.replay()
    torch.cuda.synchronize()
    times = [[] for _ in graphs]
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in graphs]
    for r in range(replays):
        order = list(range(len(graphs)) if r % 2 == 0 else reversed(range(len(graphs))))
        if lead_in:
            graphs[order[0]].replay()
        for k in order:
            events[k][0].record()
            graphs[k].replay()
            events[k][1].record()
        torch.cuda.synchronize()
        for k, (start, end) in enumerate(events):
            times[k].append(start.elapsed_time(end) * 1000.0 / calls)
    return times


def run_point(point: Point, entries: list[Entry], calls: int, replays: int, pass_index: int,
              lead_in: bool = True) -> list[dict]:
    import torch

    bufs = Buffers(point.dtype, point.nbytes, point.pairs)
    base = {"pass": pass_index, "dtype": point.dtype, "bytes": point.nbytes, "mode": point.mode,
            "pairs": point.pairs, "calls": calls}
    rows, graphs, timed = [], [], []
    for entry in entries:
        row = dict(base, entry=entry.name, kind=entry.kind, allocating=entry.allocating,
                   checked=entry.expect is not None, us=None, replays_us=None, error=None)
        try:
            fn = entry.make(bufs)
            check(entry, fn, bufs)
            graphs.append(capture(fn, point.pairs, calls))
            timed.append(row)
        except Exception as error:  # recorded, not fatal
            row["error"] = f"{type(error).__name__}: {error}".strip()[:500]
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        rows.append(row)
    if graphs:
        for row, times in zip(timed, time_graphs(graphs, calls, replays, lead_in)):
            row["replays_us"] = [round(t, 4) for t in times]
            row["us"] = round(statistics.median(times), 4)
    del graphs, bufs
    return rows


def environment(study: StudyLibrary | None, product_info) -> dict:
    import torch

    info = {"torch": torch.__version__, "python": sys.version.split()[0],
            "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        import triton

        info["triton"] = triton.__version__
    except Exception as error:
        info["triton"] = f"unavailable: {error}"
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info["device"] = {"name": props.name, "sms": props.multi_processor_count,
                          "l2_bytes": getattr(props, "L2_cache_size", None),
                          "capability": f"{props.major}.{props.minor}"}
    if study is not None:
        info["study_library"] = {"path": str(study.path),
                                 "sha256": hashlib.sha256(study.path.read_bytes()).hexdigest()}
    info["product"] = product_info
    try:
        info["git"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                     text=True, timeout=10).stdout.strip()
    except Exception:
        info["git"] = None
    return info


# ---- Tables (no GPU needed: --table)

def entry_times(rows: list[dict]) -> dict:
    """(dtype, bytes, mode) -> entry -> (median over passes, [per pass], kind)."""
    cells: dict = {}
    for r in rows:
        if r.get("us") is None:
            continue
        cell = cells.setdefault((r["dtype"], r["bytes"], r["mode"]), {})
        cell.setdefault(r["entry"], (r["kind"], []))[1].append(r["us"])
    return {key: {name: (statistics.median(ts), ts, kind) for name, (kind, ts) in cell.items()}
            for key, cell in cells.items()}


def best_of(cell: dict, names) -> tuple[str | None, float]:
    present = [n for n in names if n in cell]
    if not present:
        return None, math.nan
    name = min(present, key=lambda n: cell[n][0])
    return name, cell[name][0]


OUT_PEERS = ["o.copy_(x)", "clamp_min(out=)"]


def best_out_peer(cell: dict) -> tuple[str | None, float]:
    return best_of(cell, OUT_PEERS + [n for n, v in cell.items() if v[2] == "triton"])


def fmt(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2f}"


def ratio(a: float, b: float) -> str:
    return "-" if a is None or b is None or math.isnan(a) or math.isnan(b) or b == 0 else f"{a / b:.3f}"


def tables(data: dict) -> str:
    rows = data["rows"]
    cells = entry_times(rows)
    ordered = sorted(cells, key=lambda k: (DTYPES.index(k[0]) if k[0] in DTYPES else 9, k[1], k[2]))
    lines = [f"# L2-band study: {data.get('environment', {}).get('device', {}).get('name', '?')}", "",
             f"Command: `{data.get('command', '?')}`", "",
             "GPU time per call, us (CUDA-graph replay; median over passes of the median of the "
             "replays). best peer = fastest of o.copy_(x), clamp_min(out=) and the Triton grid; "
             "ratios > 1 mean the first column's form is faster.", "",
             "| dtype | size | mode | relu(x, out=o) | copy_ | clamp_min | best Triton | best peer / ours "
             "| study `product` | best study variant | best peer / best study | torch.relu(x) | relu(x) "
             "| torch.relu / relu(x) |",
             "|---|---|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|"]
    for key in ordered:
        cell = cells[key]
        dtype, nbytes, mode = key
        get = lambda name: cell[name][0] if name in cell else math.nan  # noqa: E731
        ours = get("relu(x, out=o)")
        triton_name, triton_us = best_of(cell, [n for n, v in cell.items() if v[2] == "triton"])
        _, peer_us = best_out_peer(cell)
        study_name, study_us = best_of(cell, [n for n, v in cell.items()
                                              if v[2] == "study" and not n.startswith("copy")])
        lines.append(
            f"| {dtype} | {size_label(nbytes)} | {mode} | {fmt(ours)} | {fmt(get('o.copy_(x)'))} | "
            f"{fmt(get('clamp_min(out=)'))} | {fmt(triton_us)} {'' if triton_name is None else triton_name[7:]} | "
            f"{ratio(peer_us, ours)} | {fmt(get('product'))} | {fmt(study_us)} {study_name or ''} | "
            f"{ratio(peer_us, study_us)} | {fmt(get('torch.relu(x)'))} | {fmt(get('relu(x)'))} | "
            f"{ratio(get('torch.relu(x)'), get('relu(x)'))} |")
    lines += ["", "Every entry over the band's points (sizes <= 32 MiB): time against the study's "
              "rebuild of the product's kernel (`product`; < 1 = faster) and best peer / entry "
              "(>= 1 = at least as fast as every out= peer), geometric mean and worst point; "
              "`spread` = the largest relative difference between two passes of one entry.", "",
              "| entry | kind | points | geomean vs `product` | geomean best peer / entry | worst best peer / entry | worst at | spread |",
              "|---|---|---:|---:|---:|---:|---|---:|"]
    names = list(dict.fromkeys(r["entry"] for r in rows))
    for name in names:
        vs_product, vs_peer, spread = [], [], 0.0
        worst, worst_at = math.inf, ""
        kind = ""
        for key in ordered:
            if key[1] > 32 * MIB or name not in cells[key]:
                continue
            cell = cells[key]
            us, per_pass, kind = cell[name]
            if len(per_pass) > 1:
                spread = max(spread, max(per_pass) / min(per_pass) - 1)
            if "product" in cell:
                vs_product.append(us / cell["product"][0])
            _, peer_us = best_out_peer(cell)
            if not math.isnan(peer_us):
                vs_peer.append(peer_us / us)
                if peer_us / us < worst:
                    worst, worst_at = peer_us / us, f"{key[0]} {size_label(key[1])} {key[2]}"
        if not vs_peer and not vs_product:
            continue
        geo = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else math.nan  # noqa: E731
        lines.append(f"| {name} | {kind} | {len(vs_peer)} | {ratio(geo(vs_product), 1.0)} | "
                     f"{ratio(geo(vs_peer), 1.0)} | {ratio(worst, 1.0) if vs_peer else '-'} | {worst_at} | "
                     f"{100 * spread:.1f}% |")
    errors = sorted({(r["entry"], r["error"]) for r in rows if r.get("error")})
    if errors:
        lines += ["", "Entries that failed (not timed):", ""]
        lines += [f"- {name}: {error}" for name, error in errors[:40]]
    if data.get("stopped_early"):
        lines += ["", f"Stopped early by the time guard: {data['stopped_early']}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant-dir", type=Path, default=None,
                        help="a built variant directory of the product (build/<variant>); without it "
                             "the product's forms are left out")
    parser.add_argument("--library", type=Path, default=DEFAULT_LIBRARY,
                        help="the study's shared library (built with --build, or here with nvcc if absent)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ROOT / "results" / "h200" / "l2_band"))
    parser.add_argument("--dtypes", nargs="+", default=DTYPES, choices=DTYPES)
    parser.add_argument("--sizes", nargs="+", type=parse_size, default=BAND_SIZES + DRAM_SIZES)
    parser.add_argument("--modes", nargs="+", default=MODES, choices=MODES)
    parser.add_argument("--calls", type=int, default=40, help="calls per graph")
    parser.add_argument("--replays", type=int, default=9, help="timed replays per graph (median)")
    parser.add_argument("--passes", type=int, default=2, help="times the whole plan runs")
    parser.add_argument("--rot-budget-mib", type=int, default=40,
                        help="rot mode: all its pairs together, inputs and outputs")
    parser.add_argument("--time-limit-s", type=float, default=330.0,
                        help="no new point starts after this many seconds")
    parser.add_argument("--no-triton", action="store_true")
    parser.add_argument("--no-study", action="store_true")
    parser.add_argument("--variants", nargs="+", default=None, metavar="NAME",
                        help="time only these study variants (names as l2_band_kernels.cu's kVariants)")
    parser.add_argument("--no-lead-in", action="store_true",
                        help="no untimed replay before each round (the first run's timing)")
    parser.add_argument("--build", action="store_true", help="compile the study's library with nvcc and exit")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and exit (no GPU)")
    parser.add_argument("--table", type=Path, default=None, metavar="JSON",
                        help="print the markdown tables of a results file and exit (no GPU)")
    args = parser.parse_args()
    started = time.monotonic()

    if args.table is not None:
        print(tables(json.loads(args.table.read_text())), end="")
        return
    if args.build:
        build_library(args.library)
        return
    plan = make_plan(args.dtypes, args.sizes, args.modes, args.calls, args.rot_budget_mib * MIB)
    if args.dry_run:
        print(f"{len(plan)} points x {args.passes} passes; entries per point: 3 torch peers"
              f"{', 2 product forms' if args.variant_dir else ''}"
              f"{'' if args.no_triton else f', {len(TRITON_CONFIGS)} Triton'}"
              f"{'' if args.no_study else ', the study library variants'}")
        for p in plan:
            print(f"  {p.dtype:9} {size_label(p.nbytes):>8} {p.mode} pairs={p.pairs}")
        if not args.no_study and args.library.exists():
            print("study variants:", ", ".join(StudyLibrary(args.library).names))
        return

    import torch

    if not torch.cuda.is_available():
        sys.exit("no CUDA device: use --dry-run or --table here")
    args.out.mkdir(parents=True, exist_ok=True)
    study = None
    setup_errors = []
    if not args.no_study:
        try:
            if not args.library.exists() and shutil.which("nvcc"):
                build_library(args.library)
            study = StudyLibrary(args.library)
        except Exception as error:
            setup_errors.append(f"study library: {error}")
    product, product_info = None, None
    if args.variant_dir is not None:
        try:
            product, product_info = load_product(args.variant_dir.resolve())
        except Exception as error:
            setup_errors.append(f"product: {error}")
            traceback.print_exc()
    triton_kernel = None
    if not args.no_triton:
        try:
            triton_kernel = triton_relu_kernel()
        except Exception as error:
            setup_errors.append(f"triton: {error}")
    for error in setup_errors:
        print("setup:", error, flush=True)

    data = {"command": "python " + " ".join([str(Path(sys.argv[0]))] + sys.argv[1:]),
            "environment": environment(study, product_info), "setup_errors": setup_errors,
            "plan": {"calls": args.calls, "replays": args.replays, "passes": args.passes,
                     "lead_in": not args.no_lead_in, "variants": args.variants,
                     "rot_budget_mib": args.rot_budget_mib, "points": len(plan)},
            "rows": [], "stopped_early": None}
    json_path, table_path = args.out / "l2_band.json", args.out / "l2_band.md"
    print(json.dumps(data["environment"]), flush=True)
    if study is not None and args.variants is not None:
        unknown = sorted(set(args.variants) - set(study.names))
        if unknown:
            setup_errors.append(f"unknown study variants (left out): {unknown}")
    entries = {dtype: make_entries(study, product, triton_kernel, dtype, args.variants)
               for dtype in args.dtypes}
    done = 0
    for pass_index in range(args.passes):
        for point in plan:
            elapsed = time.monotonic() - started
            if elapsed > args.time_limit_s:
                data["stopped_early"] = (f"after {elapsed:.0f} s, pass {pass_index}, "
                                         f"{done} of {len(plan) * args.passes} points done")
                break
            try:
                data["rows"] += run_point(point, entries[point.dtype], args.calls, args.replays, pass_index,
                                          not args.no_lead_in)
            except Exception as error:  # a point that breaks (out of memory, ...): recorded
                data["rows"].append({"pass": pass_index, "dtype": point.dtype, "bytes": point.nbytes,
                                     "mode": point.mode, "entry": "(point)", "kind": "-", "us": None,
                                     "error": f"{type(error).__name__}: {error}"[:500]})
            done += 1
            json_path.write_text(json.dumps(data, indent=1))
            print(f"[{time.monotonic() - started:5.0f} s] pass {pass_index} {point.dtype} "
                  f"{size_label(point.nbytes)} {point.mode}", flush=True)
        if data["stopped_early"]:
            break
    data["wall_s"] = round(time.monotonic() - started, 1)
    json_path.write_text(json.dumps(data, indent=1))
    table_path.write_text(tables(data))
    print(table_path.read_text(), flush=True)


if __name__ == "__main__":
    main()
