"""Side-by-side sweep: our relu against every peer, every dtype, sizes from 4 KiB up, in one
run, on the device it runs on (CPU, or the current CUDA GPU).

    python benchmarks/sweep.py                          # CPU default set (~6 min on 2 cores)
    python benchmarks/sweep.py --device cuda            # full GPU sweep, 4 KiB .. 1 GiB
    python benchmarks/sweep.py --device cuda --quick    # GPU smoke run, about a minute
    python benchmarks/sweep.py --full                   # CPU, 4 KiB .. 1 GiB
    python benchmarks/sweep.py --device cuda --l2-band  # the L2 band alone
    python benchmarks/sweep.py --device cuda --misaligned  # misaligned pairs alone

Peers (forward), in two forms that are compared only within their form:
  - out= (writes a given `o`): relu(x, out=o) ["relu_out"], torch.clamp_min(x, 0, out=o)
    ["clamp_min_out"], the ceilings o.copy_(x) ["copy_"] and (CUDA) a plain 16-byte copy kernel
    ["copy16"], and upstream's float32 kernel as described (CPU: a single-threaded 4-wide SSE
    loop ["sse_baseline"]; CUDA: one block per row ["row_per_block"]);
  - allocating (returns a new tensor): relu(x) ["relu"], torch.relu(x), x.clone() (the
    allocating copy ["clone"]) and, compiled with static shapes at the key sizes,
    torch.compile(torch.relu) ["torch.compile"] and torch.compile of relu ["compile(relu)"].
Backward: our relu_backward op against aten.threshold_backward (torch.relu's backward), both
allocating, float dtypes, at the key sizes. Misaligned pairs (op "misaligned"): x = a view one
element into its buffer, o and every allocating result aligned, so x and out differ modulo 16
bytes; --misaligned: these alone, 256 KiB .. 1 GiB (CPU .. 64 MiB), each beside its aligned point.
--l2-band: 256 KiB .. 32 MiB, float32/float16/bfloat16/int8, modes hot, rot and cold; out=:
relu(x, out=o) against copy_, clamp_min(out=) and (CUDA) a plain Triton ReLU in 8 configs
(BLOCK 1024-8192 x 4 or 8 warps) into the same o ["triton_b<BLOCK>_w<warps>"]; allocating:
relu(x) against torch.relu(x), x.clone() and the same Triton configs allocating
(torch.empty_like, then the launch) ["triton_alloc_b..."]. report.py prints per point ours,
the best peer and best/ours, for each form.

Timing (benchmarks/timing.py):
  - CUDA "hot"/"cold": GPU time per call from CUDA-graph replay. hot = one buffer pair; cold =
    enough separate sets, rotated, that the inputs alone exceed 1.5x L2; rot (256 KiB .. 32 MiB)
    = sets rotated within 0.75x L2. out= forms write their set's `o`; allocating forms the block
    the caching allocator hands back, the same block call after call (so their output stays in
    L2, as in a model that frees and reallocates a buffer): that is why the forms are never
    compared with each other. footprint_bytes: the memory a form touches in one lap.
  - CUDA "eager": host-timed loop plus one synchronize, per call, dispatch included.
  - CPU: host-timed loops, the same modes (the cache: the last level's).
  - Peers interleaved (A B C C B A ...), medians of the repeats; every peer checked against an
    independent reference (poisoned output first) before it is timed; a peer that fails is
    recorded with its error, not timed.
Results: JSON, rewritten after every point, at <out>/sweep.json (default results/<device>/).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import baselines  # noqa: E402
from timing import (  # noqa: E402
    ROOT, GiB, KiB, MiB, Buffers, GraphSampler, HostSampler, MachineLoad, Rotation, cold_sets, device_label,
    fmt_size, interleaved, last_level_cache_bytes, load_build, measure_when_quiet, parse_size, random_fill,
    relu_reference, run_meta, synchronize, within_cache_sets, write_results,
)

DTYPES = {name: getattr(torch, name) for name in (
    "float32", "float16", "bfloat16", "int8", "float64", "int16", "int32", "int64", "uint8")}
QUICK_DTYPES = ["float32", "bfloat16", "int8"]
# The CPU's targets are stated in elements: these counts of every dtype are always in the CPU
# sweep (and are where CPU torch.compile and backward are measured).
CPU_TARGET_NUMELS = [1024**2, 4096**2, 8192**2]
LATENCY_NUMEL = 4096
ROW_LENGTH = 4096  # rows of 4096 like upstream's large workload (4096x4096)
L2_BAND_SIZES = [256 * KiB << i for i in range(8)]  # 256 KiB .. 32 MiB
L2_BAND_DTYPES = ["float32", "float16", "bfloat16", "int8"]
L2_BAND_PEERS = ("relu_out", "copy_", "clamp_min_out", "relu", "torch.relu", "clone")  # and Triton's
MISALIGNED_SIZES = [256 * KiB << 2 * i for i in range(7)]  # 256 KiB .. 1 GiB, powers of 4
MAX_ROT_SETS = 40  # one graph of 40 calls visits every set of the rotation at least once


def byte_sizes(device: str, cache_bytes: int, args) -> list[int]:
    if args.sizes:
        return sorted({parse_size(s) for s in args.sizes})
    if args.l2_band:
        return [256 * KiB, 1 * MiB] if args.quick else L2_BAND_SIZES
    if args.quick:
        return [4 * KiB, 1 * MiB, 64 * MiB] if device == "cuda" else [4 * KiB, 1 * MiB, 16 * MiB]
    powers = [4 * KiB << i for i in range(19)]  # 4 KiB .. 1 GiB
    if device == "cuda" or args.full:
        # Dense points from a quarter to twice the cache, 1 MiB granular.
        band = [0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.5, 1.75, 2.0]
        return sorted(set(powers) | {max(MiB, round(cache_bytes * f / MiB) * MiB) for f in band})
    return sorted({4 * KiB, 32 * KiB, 256 * KiB} | {s for s in powers if MiB <= s <= 256 * MiB})


def key_sizes(device: str, sizes: list[int], itemsize: int, args) -> set[int]:
    """Where the costly peers (torch.compile, one recompile per shape) and the backward run:
    CPU at the target element counts; CUDA at powers of 16 from 4 KiB, 64 MiB and 1 GiB; every
    size with --quick, explicit --sizes or --compile-everywhere."""
    if args.quick or args.sizes or args.compile_everywhere:
        return set(sizes)
    if device == "cpu":
        return {n * itemsize for n in CPU_TARGET_NUMELS}
    return {s for s in sizes if s & (s - 1) == 0 and int(math.log2(s)) % 4 == 0} | {64 * MiB, GiB}


def shape_for(numel: int) -> tuple[int, ...]:
    return (numel // ROW_LENGTH, ROW_LENGTH) if numel % ROW_LENGTH == 0 else (numel,)


def poison_like(expected: torch.Tensor) -> torch.Tensor:
    """A value differing from `expected` everywhere: a peer that skips an element fails."""
    return torch.full_like(expected, float("nan")) if expected.dtype.is_floating_point else expected + 1


# ----------------------------------------------------------------------------- peers

@dataclass
class Peer:
    name: str
    call: Callable[[dict], object]  # runs once on a buffer set; may return a new tensor
    writes: str | None  # role it writes (out= peers) or None (returns its result)
    expected: str  # "relu" / "copy" / "relu_backward"

    @property
    def form(self) -> str:
        return "allocating" if self.writes is None else "out"


@dataclass
class Context:
    device: str
    kernel: object
    ops: object
    cpu_baselines: object = None
    cuda_baselines: object = None
    triton_relu: object = None  # baselines.load_triton_relu()'s launcher (--l2-band, CUDA)
    compile_broken: set = field(default_factory=set)  # compiled peers whose check failed once
    errors: list = field(default_factory=list)


def forward_peers(ctx: Context, dtype: torch.dtype, with_compile: bool) -> list[Peer]:
    relu = ctx.kernel.relu
    peers = [
        Peer("relu_out", lambda b: relu(b["x"], out=b["o"]), "o", "relu"),
        Peer("relu", lambda b: relu(b["x"]), None, "relu"),
        Peer("torch.relu", lambda b: torch.relu(b["x"]), None, "relu"),
        Peer("clamp_min_out", lambda b: torch.clamp_min(b["x"], 0, out=b["o"]), "o", "relu"),
        Peer("clone", lambda b: b["x"].clone(), None, "copy"),
        Peer("copy_", lambda b: b["o"].copy_(b["x"]), "o", "copy"),
    ]
    if with_compile:
        torch._dynamo.reset()  # one static shape at a time; no recompile limit reached
        for name, fn in (("torch.compile", torch.relu), ("compile(relu)", relu)):
            if name not in ctx.compile_broken:
                compiled = torch.compile(lambda x, fn=fn: fn(x), dynamic=False)
                peers.append(Peer(name, lambda b, c=compiled: c(b["x"]), None, "relu"))
    if dtype == torch.float32 and ctx.cpu_baselines is not None:
        sse = ctx.cpu_baselines.sse_relu
        peers.append(Peer("sse_baseline", lambda b: sse(b["o"], b["x"]), "o", "relu"))
    if ctx.cuda_baselines is not None:
        if dtype == torch.float32:
            row = ctx.cuda_baselines.row_relu
            peers.append(Peer("row_per_block", lambda b: row(b["o"], b["x"]), "o", "relu"))
        copy16 = ctx.cuda_baselines.copy16
        peers.append(Peer("copy16", lambda b: copy16(b["o"], b["x"]), "o", "copy"))
    if ctx.triton_relu is not None:
        launch = ctx.triton_relu
        for block, warps in baselines.TRITON_CONFIGS:
            peers.append(Peer(baselines.triton_peer_name(block, warps),
                              lambda b, k=block, w=warps: launch(b["o"], b["x"], k, w), "o", "relu"))
            peers.append(Peer(baselines.triton_peer_name(block, warps, allocating=True),
                              lambda b, k=block, w=warps: launch(torch.empty_like(b["x"]), b["x"], k, w), None, "relu"))
    return peers


def backward_peers(ctx: Context) -> list[Peer]:
    ours, aten = ctx.ops.relu_backward, torch.ops.aten.threshold_backward
    return [Peer("relu_backward", lambda b: ours(b["g"], b["r"]), None, "relu_backward"),
            Peer("threshold_backward", lambda b: aten(b["g"], b["r"], 0), None, "relu_backward")]


def check_peer(peer: Peer, b: dict) -> None:
    if peer.expected == "copy":
        expected = b["x"].clone()
    elif peer.expected == "relu":
        expected = relu_reference(b["x"])
    else:
        expected = torch.where(b["r"] > 0, b["g"], torch.zeros_like(b["g"]))
    if peer.writes is not None:
        b[peer.writes].copy_(poison_like(expected))
    got = peer.call(b)
    if not torch.equal(b[peer.writes] if peer.writes is not None else got, expected):
        raise AssertionError(f"{peer.name}: output differs from the reference")


# ----------------------------------------------------------------------------- one point

@dataclass
class Point:
    op: str  # "forward" / "backward" / "latency" / "flat1d" / "misaligned"
    dtype_name: str
    nbytes: int
    shape: tuple
    with_compile: bool = False
    offset_bytes: int = 0  # "misaligned": x starts this many bytes into its buffer


def peers_of(ctx: Context, point: Point, args) -> tuple[list[str], list[Peer]]:
    if point.op == "backward":
        return ["g", "r"], backward_peers(ctx)
    peers = forward_peers(ctx, DTYPES[point.dtype_name], point.with_compile)
    keep = {"latency": ("relu_out", "clamp_min_out", "copy_", "relu", "torch.relu", "clone"),
            "flat1d": ("relu_out", "clamp_min_out", "row_per_block", "sse_baseline", "copy_", "copy16", "relu",
                       "torch.relu", "clone")}.get(point.op)
    if args.l2_band:
        peers = [p for p in peers if p.name in L2_BAND_PEERS or p.name.startswith("triton")]
    elif keep:
        peers = [p for p in peers if p.name in keep]
    elif point.op == "misaligned":  # the baselines and copy16 assume aligned operands
        peers = [p for p in peers if p.name not in ("sse_baseline", "row_per_block", "copy16")]
    return ["x", "o"], peers


def run_point(ctx: Context, point: Point, cache_bytes: int, args) -> list[dict]:
    device, dtype = ctx.device, DTYPES[point.dtype_name]
    numel = math.prod(point.shape)
    roles, peers = peers_of(ctx, point, args)
    bytes_per_set = numel * dtype.itemsize * len(roles)
    # Every form rotates its inputs (x; backward: g and r), out= forms o as well; allocating
    # forms write the allocator's block instead. Sizing the rotation on the inputs keeps both
    # forms' inputs beyond the cache.
    input_bytes = numel * dtype.itemsize * (2 if point.op == "backward" else 1)
    rotations = {"hot": 1}
    if point.op in ("forward", "backward", "misaligned"):
        rotations["cold"] = cold_sets(input_bytes, cache_bytes, args.max_cold_sets)
    if point.op == "forward" and (args.l2_band or (device == "cuda" and L2_BAND_SIZES[0] <= point.nbytes
                                                   <= L2_BAND_SIZES[-1])):
        rot = within_cache_sets(bytes_per_set, cache_bytes, MAX_ROT_SETS)
        if rot >= 2:
            rotations["rot"] = rot
    if point.op == "misaligned":
        # Each set's x starts offset_bytes into a row with room for it; o at the row's start.
        shift = point.offset_bytes // dtype.itemsize
        buffers = Buffers(roles, max(rotations.values()), (numel + 16 // dtype.itemsize,), dtype, device)
        buffers.sets = [{"x": s["x"][shift:shift + numel].view(point.shape), "o": s["o"][:numel].view(point.shape)}
                        for s in buffers.sets]
    else:
        buffers = Buffers(roles, max(rotations.values()), point.shape, dtype, device)
    first = buffers.sets[0]
    for role in roles:
        random_fill(first[role])
    if point.op == "backward":
        first["r"].clamp_(min=0)  # a forward result: zeros where the input was <= 0
    for role in roles:  # every set holds the same data as set 0
        buffers.pools[role][1:] = buffers.pools[role][0]

    base = dict(op=point.op, dtype=point.dtype_name, bytes=numel * dtype.itemsize, numel=numel, shape=list(point.shape))
    if point.op == "misaligned":
        base["offset_bytes"] = point.offset_bytes
    bytes_moved = numel * dtype.itemsize * (3 if point.op == "backward" else 2)
    records, good = [], []
    for peer in peers:
        try:
            check_peer(peer, dict(first))
            good.append(peer)
        except Exception as exc:  # recorded and skipped; the sweep goes on
            records.append(dict(base, peer=peer.name, mode="check", error=f"{type(exc).__name__}: {exc}"))
            if peer.name in ("torch.compile", "compile(relu)"):
                ctx.compile_broken.add(peer.name)  # no point retrying a broken toolchain at every size
    synchronize(device)

    def emit(mode: str, samplers: dict, sets: int):
        for name, values in interleaved(samplers, args.repeats).items():
            us = statistics.median(values) * 1e6
            form = next(p.form for p in good if p.name == name)
            footprint = sets * bytes_per_set if form == "out" else sets * input_bytes + numel * dtype.itemsize
            records.append(dict(base, peer=name, form=form, mode=mode, us=us, gbps=bytes_moved / us * 1e-3,
                                samples_us=[round(v * 1e6, 4) for v in values],
                                calls_per_sample=samplers[name].calls, footprint_bytes=footprint))

    # Host-timed: CPU, every mode; CUDA, eager (the hot set), unless graph replay alone.
    per_call = {}
    for mode in list(rotations) if device == "cpu" else ([] if args.l2_band else ["eager"]):
        count = rotations.get(mode, 1)
        rotation = Rotation(buffers.sets[:count]) if count > 1 else None  # shared by the mode's peers
        samplers = {}
        for peer in good:
            try:
                s = HostSampler(peer.call, rotation or buffers.sets[:1], device)
                per_call.setdefault(peer.name, s.calibrate(args.min_sample_ms * 1e-3))
                samplers[peer.name] = s
            except Exception as exc:
                records.append(dict(base, peer=peer.name, mode=mode, error=f"{type(exc).__name__}: {exc}"))
        emit(mode, samplers, count)
    if device == "cuda" and point.op != "latency":
        for mode, count in rotations.items():
            sets, samplers = buffers.sets[:count], {}
            for peer in good:
                try:
                    calls = args.graph_calls or max(args.min_graph_calls, min(2000, math.ceil(
                        args.min_graph_ms * 1e-3 / max(per_call.get(peer.name, 1e-5), 1e-6))))
                    calls = len(sets) * math.ceil(calls / len(sets))  # every set once per lap
                    samplers[peer.name] = GraphSampler(peer.call, sets, calls)
                except Exception as exc:
                    records.append(dict(base, peer=peer.name, mode=mode, error=f"{type(exc).__name__}: {exc}"))
                    torch.cuda.synchronize()
            emit(mode, samplers, len(sets))
            del samplers
    del buffers
    if device == "cuda" and numel * dtype.itemsize >= 256 * MiB:
        torch.cuda.empty_cache()
    return records


# ----------------------------------------------------------------------------- driver

def misaligned_point(name: str, nbytes: int) -> Point:
    """x = base[1:]: one element into its buffer."""
    itemsize = DTYPES[name].itemsize
    return Point("misaligned", name, nbytes, (nbytes // itemsize,), offset_bytes=itemsize)


def build_points(device: str, cache_bytes: int, args) -> list[Point]:
    forward = lambda name, nbytes, **kw: Point("forward", name, nbytes, shape_for(nbytes // DTYPES[name].itemsize), **kw)  # noqa: E731
    if args.misaligned:  # each beside its aligned point (the copy_ ceiling)
        names = args.dtypes or (QUICK_DTYPES if args.quick else ["float32", "float16", "bfloat16", "int8", "float64"])
        top = GiB if device == "cuda" else 64 * MiB
        sizes = sorted({parse_size(s) for s in args.sizes}) if args.sizes else (
            [1 * MiB, 64 * MiB] if args.quick else [s for s in MISALIGNED_SIZES if s <= top])
        return [p for name in names for nbytes in sizes if nbytes % DTYPES[name].itemsize == 0
                for p in (forward(name, nbytes), misaligned_point(name, nbytes))]
    if args.l2_band:
        names = args.dtypes or (QUICK_DTYPES if args.quick else L2_BAND_DTYPES)
        return [forward(name, nbytes) for name in names for nbytes in byte_sizes(device, cache_bytes, args)
                if nbytes % DTYPES[name].itemsize == 0]
    names = args.dtypes or (QUICK_DTYPES if args.quick else list(DTYPES))
    points = []
    for name in names:
        itemsize = DTYPES[name].itemsize
        sizes = byte_sizes(device, cache_bytes, args)
        if device == "cpu" and not args.sizes and not args.quick:
            sizes = sorted(set(sizes) | {n * itemsize for n in CPU_TARGET_NUMELS})
        keys = key_sizes(device, sizes, itemsize, args)
        points += [forward(name, nbytes, with_compile=not args.no_compile and nbytes in keys)
                   for nbytes in sizes if nbytes % itemsize == 0]
        points += [misaligned_point(name, nbytes) for nbytes in sorted(keys)]
        if not args.no_backward and DTYPES[name].is_floating_point:
            points += [Point("backward", name, nbytes, shape_for(nbytes // itemsize)) for nbytes in sorted(keys)]
        points.append(Point("latency", name, LATENCY_NUMEL * itemsize, (LATENCY_NUMEL,)))
    if "float32" in names and not args.quick:  # upstream's launch on a 1-D tensor: one block
        points.append(Point("flat1d", "float32", 64 * MiB, (16 * MiB,)))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 dtypes, 3 sizes, 3 repeats")
    parser.add_argument("--l2-band", action="store_true",
                        help="only the L2 band: 256 KiB .. 32 MiB, float32/float16/bfloat16/int8, hot, rot and cold, "
                             "both forms against their best peers, the plain Triton configs included; CUDA: graph "
                             "replay of 40 calls, median of 9 (quick: 2 sizes, 3 dtypes, 3 repeats)")
    parser.add_argument("--full", action="store_true", help="CPU: 4 KiB .. 1 GiB like the GPU sweep")
    parser.add_argument("--misaligned", action="store_true",
                        help="only misaligned pairs (x = base[1:]) beside their aligned points, 256 KiB .. 1 GiB "
                             "(CPU: .. 64 MiB), float32/float16/bfloat16/int8/float64 (quick: 1 and 64 MiB, 3 dtypes)")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), help="default: all (quick: 3)")
    parser.add_argument("--sizes", nargs="+", help="input sizes, e.g. 4KiB 64MiB 1GiB (overrides the set)")
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 7, L2 band 9, quick 3)")
    parser.add_argument("--min-sample-ms", type=float, default=None, help="host-timed sample (default CPU 10, CUDA 2)")
    parser.add_argument("--min-graph-ms", type=float, default=0.2, help="GPU time per graph replay at least")
    parser.add_argument("--min-graph-calls", type=int, default=20)
    parser.add_argument("--graph-calls", type=int, default=None,
                        help="calls per graph, fixed (default: enough for --min-graph-ms; --l2-band 40)")
    parser.add_argument("--max-cold-sets", type=int, default=16384, help="cap on rotated buffer sets")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--compile-everywhere", action="store_true",
                        help="torch.compile and backward at every size, not only the key sizes")
    parser.add_argument("--no-backward", action="store_true")
    parser.add_argument("--threads", type=int, default=None, help="CPU: torch.set_num_threads")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when other processes used more than this share of the "
                             "cores meanwhile (1 turns the check off)")
    parser.add_argument("--quiet-wait-s", type=float, default=20.0, help="CPU: wait this long at most for quiet")
    parser.add_argument("--retries", type=int, default=2, help="CPU: measurements again of a contended point")
    parser.add_argument("--time-limit-s", type=float, default=None,
                        help="stop starting new points after this many seconds (what ran is saved)")
    parser.add_argument("--out", type=Path, default=None, help="directory for sweep.json (default results/<device>)")
    parser.add_argument("--kernel", type=Path, default=ROOT,
                        help="a checkout, its build/ or one variant directory (default: this checkout)")
    args = parser.parse_args()
    args.repeats = args.repeats or (3 if args.quick else (9 if args.l2_band else 7))
    if args.l2_band and args.graph_calls is None:
        args.graph_calls = 40
    args.min_sample_ms = args.min_sample_ms or (10.0 if args.device == "cpu" else 2.0)
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    kernel = load_build(args.kernel, device)
    ctx = Context(device=device, kernel=kernel, ops=kernel._ops.ops)
    triton_note = "not measured: the plain Triton peer runs with --l2-band on CUDA only"
    if not args.l2_band:  # the L2 band has no upstream baseline and no copy16
        try:
            if device == "cpu":
                ctx.cpu_baselines = baselines.load_cpu_baselines()
            else:
                ctx.cuda_baselines = baselines.load_cuda_baselines()
        except Exception as exc:
            ctx.errors.append(f"baselines did not build: {type(exc).__name__}: {exc}")
    elif device == "cuda":
        try:
            ctx.triton_relu, triton_note = baselines.load_triton_relu(), baselines.TRITON_DESCRIPTION
        except Exception as exc:  # no Triton in this torch: the sweep goes on without it
            triton_note = f"not measured: Triton did not load ({type(exc).__name__}: {exc})"
    for error in ctx.errors:
        print(error, file=sys.stderr)
    for attr in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, attr):
            setattr(torch._dynamo.config, attr, 64)

    cache_bytes = last_level_cache_bytes(device)
    out_file = (args.out or ROOT / "results" / device_label(device)) / "sweep.json"
    meta = run_meta(device, kernel, cache_bytes=cache_bytes, cache="L2" if device == "cuda" else "last-level cache",
                    repeats=args.repeats, l2_band=args.l2_band, graph_calls=args.graph_calls, triton_peer=triton_note,
                    cold_rotation="inputs > 1.5x cache for every form; out= forms rotate o too; allocating forms "
                                  "write the allocator's block",
                    rot_rotation="x and o sets within 0.75x the cache (2-40 sets), at the L2 band's sizes",
                    errors=ctx.errors)
    points = build_points(device, cache_bytes, args)
    records: list[dict] = []
    load = MachineLoad(args.quiet_share) if device == "cpu" and args.quiet_share < 1 else None
    started = time.time()
    for i, point in enumerate(points):
        if args.time_limit_s and time.time() - started > args.time_limit_s:
            meta["stopped_early"] = f"--time-limit-s {args.time_limit_s}: {i} of {len(points)} points"
            break
        print(f"[{i + 1}/{len(points)}] {point.op} {point.dtype_name} {fmt_size(point.nbytes)}", file=sys.stderr,
              flush=True)
        try:
            records += measure_when_quiet(lambda: run_point(ctx, point, cache_bytes, args), load, args.retries,
                                          args.quiet_wait_s)
        except Exception as exc:  # one bad point (e.g. out of memory) must not end the sweep
            records.append(dict(op=point.op, dtype=point.dtype_name, bytes=point.nbytes,
                                error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc(limit=3)))
            if device == "cuda":
                torch.cuda.empty_cache()
        write_results(out_file, meta, records)
    meta.update(seconds=round(time.time() - started, 1), loadavg_end=os.getloadavg())
    write_results(out_file, meta, records)
    failures = [r for r in records if "error" in r]
    print(f"{len(records) - len(failures)} measurements, {len(failures)} errors -> {out_file}", file=sys.stderr)
    for r in failures[:20]:
        print(f"  {r.get('op')} {r.get('dtype')} {r.get('bytes')} {r.get('peer', '')} {r.get('mode', '')}: "
              f"{r['error']}", file=sys.stderr)


if __name__ == "__main__":
    main()
