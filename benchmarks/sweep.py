"""Side-by-side sweep: our relu against every peer, every dtype, sizes from 4 KiB up, in one
run, on the device it runs on (CPU, or the current CUDA GPU). PERFORMANCE.md explains the
method; this docstring says how.

    python benchmarks/sweep.py                      # CPU default set (~6 min on 2 cores)
    python benchmarks/sweep.py --device cuda        # full GPU sweep, 4 KiB .. 1 GiB
    python benchmarks/sweep.py --device cuda --quick   # GPU smoke run, about a minute
    python benchmarks/sweep.py --full               # CPU, 4 KiB .. 1 GiB
    python benchmarks/sweep.py --device cuda --l2-band # the L2 band alone: 2-3 min of an H200
    python benchmarks/sweep.py --device cuda --misaligned  # misaligned pairs alone

Peers (forward), in two forms that are compared only within their form:
  - out= (writes a given `o`): relu(x, out=o) ["relu_out"], torch.clamp_min(x, 0, out=o)
    ["clamp_min_out"], the float32 baseline of upstream's kernel (CPU: single-threaded
    4-wide SSE loop ["sse_baseline"]; CUDA: one block per row ["row_per_block"]), and the
    ceilings o.copy_(x) ["copy_"] and (CUDA) a plain 16-byte copy kernel ["copy16"], and
    (CUDA, where Triton loads) a plain Triton ReLU at six BLOCK x num_warps configs
    ["triton_b<BLOCK>_w<warps>"], which the report folds into "best plain Triton";
  - allocating (returns a new tensor): relu(x) ["relu"], torch.relu(x), x.clone() (the
    allocating copy ["clone"]), and, compiled with static shapes, torch.compile(torch.relu)
    ["torch.compile"] and torch.compile of this package's relu(x) ["compile(relu)"].
Every record names its form ("form": "out" / "allocating"). Pairs (benchmarks/report.py):
relu vs torch.relu and clone, relu_out vs clamp_min_out and copy_, compile(relu) vs
torch.compile: eager against eager, compiled against compiled.
Backward: our relu_backward op against aten.threshold_backward (the op torch.relu's
backward runs), both allocating, float dtypes.
Misaligned pairs (op "misaligned"): x = a view one element into its buffer (x = base[1:]),
o and every allocating result aligned, so x and out differ modulo 16 bytes (by the element
size); the forward peers above but the compiled ones and the float32 baselines, hot and cold.
At the key sizes (below) of every dtype; --misaligned: these points alone, at powers of 4
from 256 KiB (CUDA up to 1 GiB, CPU up to 64 MiB). The ceiling to hold them against is the
aligned point's copy_ of the same size (op "forward"), which --misaligned measures beside.

Timing:
  - CUDA "hot"/"cold": GPU time per call from CUDA-graph replay (a graph of many calls,
    CUDA events around each replay). "hot" = one buffer pair; "cold" = enough separate
    input/output sets, rotated, that the inputs alone exceed 1.5x L2, so every call reads
    from DRAM. out= forms write the set's own `o` (cold too); allocating forms write the
    block the caching allocator hands back, the same block call after call (so their output
    stays in L2, as in a model that frees and reallocates a buffer): that is why out= and
    allocating forms are never compared with each other. Each record's footprint_bytes is
    the memory its form touches in one lap. "rot" (forward, 256 KiB .. 32 MiB): sets of x
    and o rotated within 0.75x the L2, so the data is L2-resident but no call reuses the
    lines the previous one touched.
  - CUDA "eager": host-timed loop of calls plus one synchronize, per call: what a Python
    caller pays, dispatch included (the `kernels benchmark` view).
  - CPU "hot"/"cold": host-timed loops, one pair vs. sets whose inputs alone exceed 1.5x
    the last-level cache, rotated (the allocating forms' outputs, as on CUDA, come from the
    allocator: the same heap block below glibc's mmap threshold, fresh pages above it).
    --l2-band on the CPU: "hot" and "rot" within the last-level cache, host-timed.
  - --l2-band: forward only, the sizes 256 KiB .. 32 MiB, float32/float16/bfloat16/int8,
    hot and rot, peers relu_out, copy_, clamp_min_out, the Triton configs, relu and
    torch.relu; CUDA: graph replay only, 40 calls per graph, medians of 9.
  - Samplers, interleaving, rotation and the quiet-machine check: benchmarks/timing.py.
  - Peers are interleaved: each repeat runs every peer once, in forward then reversed order
    on alternate repeats (A B C C B A ...), so slow drift hits all alike. Medians of repeats.
  - Every peer's output is checked against an independent reference (poisoned output
    first) before it is timed; a peer that fails is recorded with its error, not timed.
Results: JSON, rewritten after every point, at <out>/sweep.json (default results/<device>/).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
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
    ROOT,
    GiB,
    KiB,
    MiB,
    Buffers,
    GraphSampler,
    HostSampler,
    MachineLoad,
    Rotation,
    cold_sets,
    cpu_model,
    device_label,
    git_revision,
    interleaved,
    last_level_cache_bytes,
    measure_when_quiet,
    synchronize,
    within_cache_sets,
)

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int8": torch.int8,
    "float64": torch.float64,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
}
QUICK_DTYPES = ["float32", "bfloat16", "int8"]
# Issue 2's CPU targets are stated in elements: these counts of every dtype are always in
# the CPU sweep (and are where CPU torch.compile and backward are measured).
CPU_TARGET_NUMELS = [1024**2, 4096**2, 8192**2]
LATENCY_NUMEL = 4096
ROW_LENGTH = 4096  # rows of 4096 like upstream's large workload (4096x4096)
# The L2-resident band (--l2-band): where most activations of a model live on an H200
# (60 MiB L2). The full CUDA sweep measures "rot" at its sizes in this range too.
L2_BAND_SIZES = [256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 32 * MiB]
L2_BAND_DTYPES = ["float32", "float16", "bfloat16", "int8"]
L2_BAND_PEERS = ("relu_out", "copy_", "clamp_min_out", "relu", "torch.relu")  # and the Triton configs
MAX_ROT_SETS = 40  # one graph of 40 calls visits every set of the rotation at least once


# ----------------------------------------------------------------------------- sizes

def powers_of_two(lo: int, hi: int) -> list[int]:
    sizes, s = [], lo
    while s <= hi:
        sizes.append(s)
        s *= 2
    return sizes


def band_around(cache_bytes: int) -> list[int]:
    """Dense points from a quarter to twice the cache size, 1 MiB granular."""
    fractions = [0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.5, 1.75, 2.0]
    return [max(MiB, round(cache_bytes * f / MiB) * MiB) for f in fractions]


def byte_sizes(device: str, cache_bytes: int, args) -> list[int]:
    if args.sizes:
        return sorted({parse_size(s) for s in args.sizes})
    if args.l2_band:
        return [256 * KiB, 1 * MiB] if args.quick else L2_BAND_SIZES
    if args.quick:
        return [4 * KiB, 1 * MiB, 64 * MiB] if device == "cuda" else [4 * KiB, 1 * MiB, 16 * MiB]
    if device == "cuda" or args.full:
        return sorted(set(powers_of_two(4 * KiB, 1 * GiB)) | set(band_around(cache_bytes)))
    # CPU default: finishes in minutes on 2 cores; --full for the whole range.
    return sorted({4 * KiB, 32 * KiB, 256 * KiB} | set(powers_of_two(1 * MiB, 256 * MiB)))


def key_sizes(device: str, sizes: list[int], itemsize: int, args) -> set[int]:
    """Sizes where the costly peers (torch.compile, one recompile per shape, 1-2 s each) and
    the backward pass are measured: CPU at issue 2's element counts; CUDA at powers of 16
    from 4 KiB, plus 64 MiB and 1 GiB (issue 3's sizes); every size in --quick, with
    explicit --sizes or with --compile-everywhere."""
    if args.quick or args.sizes or args.compile_everywhere:
        return set(sizes)
    if device == "cpu":
        return {n * itemsize for n in CPU_TARGET_NUMELS}
    return {s for s in sizes if s & (s - 1) == 0 and int(math.log2(s)) % 4 == 0} | {64 * MiB, GiB}


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)(i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"size {text!r}: use e.g. 4KiB, 64MiB, 1GiB")
    unit = {"": 1, "K": KiB, "M": MiB, "G": GiB}[m.group(2).upper()]
    return int(m.group(1)) * unit


def fmt_size(nbytes: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    if nbytes >= MiB:
        return f"{nbytes / MiB:.1f} MiB"
    return f"{nbytes} B"


def shape_for(numel: int) -> tuple[int, ...]:
    return (numel // ROW_LENGTH, ROW_LENGTH) if numel % ROW_LENGTH == 0 else (numel,)


# ----------------------------------------------------------------------------- data

def random_fill(t: torch.Tensor) -> torch.Tensor:
    """NaN-free random data: every peer then computes the same values (torch maps NaN to
    NaN, ours to 0). Signed data is about half negative."""
    if t.dtype.is_floating_point:
        t.copy_(torch.randn(t.shape, device=t.device, dtype=torch.float32))
    else:
        info = torch.iinfo(t.dtype)  # randint's bounds must fit int64: int64 gets int32's range
        low, high = max(info.min, -(2**31)), min(info.max, 2**31 - 1) + 1
        t.copy_(torch.randint(low, high, t.shape, device=t.device, dtype=t.dtype))
    return t


def poison_like(expected: torch.Tensor) -> torch.Tensor:
    """A value differing from `expected` everywhere: a peer that skips an element fails."""
    if expected.dtype.is_floating_point:
        return torch.full_like(expected, float("nan"))
    return expected + 1  # wraps for integers; still differs from every element


# ----------------------------------------------------------------------------- peers

@dataclass
class Peer:
    name: str
    call: Callable[[dict], object]  # runs once on a buffer set; may return a new tensor
    writes: str | None  # role it writes (out= peers) or None (returns its result)
    expected: str  # "relu" / "copy" / "relu_backward"

    @property
    def form(self) -> str:
        """"out" writes a buffer of the set; "allocating" returns a new tensor."""
        return "allocating" if self.writes is None else "out"


@dataclass
class Context:
    device: str
    kernel: object
    ops: object
    cpu_baselines: object = None
    cuda_baselines: object = None
    triton_relu: object = None  # baselines.load_triton_relu()'s launcher, CUDA only
    compile_broken: set = field(default_factory=set)  # compiled peers whose check failed once
    errors: list = field(default_factory=list)


def forward_peers(ctx: Context, dtype: torch.dtype, with_compile: bool) -> list[Peer]:
    relu = ctx.kernel.relu
    peers = [
        Peer("relu_out", lambda b: relu(b["x"], out=b["o"]), "o", "relu"),
        Peer("relu", lambda b: relu(b["x"]), None, "relu"),
        Peer("torch.relu", lambda b: torch.relu(b["x"]), None, "relu"),
        Peer("clamp_min_out", lambda b: torch.clamp_min(b["x"], 0, out=b["o"]), "o", "relu"),
    ]
    peers.append(Peer("clone", lambda b: b["x"].clone(), None, "copy"))
    if with_compile:
        torch._dynamo.reset()  # one static shape at a time; no recompile limit reached
        # Compiled against compiled: torch.relu and this package's relu, both allocating.
        for name, fn in (("torch.compile", torch.relu), ("compile(relu)", relu)):
            if name not in ctx.compile_broken:
                compiled = torch.compile(lambda x, fn=fn: fn(x), dynamic=False)
                peers.append(Peer(name, lambda b, c=compiled: c(b["x"]), None, "relu"))
    if dtype == torch.float32 and ctx.cpu_baselines is not None:
        sse = ctx.cpu_baselines.sse_relu
        peers.append(Peer("sse_baseline", lambda b: sse(b["o"], b["x"]), "o", "relu"))
    if dtype == torch.float32 and ctx.cuda_baselines is not None:
        row = ctx.cuda_baselines.row_relu
        peers.append(Peer("row_per_block", lambda b: row(b["o"], b["x"]), "o", "relu"))
    peers.append(Peer("copy_", lambda b: b["o"].copy_(b["x"]), "o", "copy"))
    if ctx.cuda_baselines is not None:
        copy16 = ctx.cuda_baselines.copy16
        peers.append(Peer("copy16", lambda b: copy16(b["o"], b["x"]), "o", "copy"))
    if ctx.triton_relu is not None:
        # One peer per config, into the same `o` as the other out= forms; the report takes
        # the fastest per point ("best plain Triton").
        for block, warps in baselines.TRITON_CONFIGS:
            peers.append(Peer(baselines.triton_peer_name(block, warps),
                              lambda b, blk=block, w=warps: ctx.triton_relu(b["o"], b["x"], blk, w), "o", "relu"))
    return peers


def backward_peers(ctx: Context) -> list[Peer]:
    ours = ctx.ops.relu_backward
    aten = torch.ops.aten.threshold_backward
    return [
        Peer("relu_backward", lambda b: ours(b["g"], b["r"]), None, "relu_backward"),
        Peer("threshold_backward", lambda b: aten(b["g"], b["r"], 0), None, "relu_backward"),
    ]


def reference(kind: str, b: dict) -> torch.Tensor:
    """Independent of every peer: torch.where on the definition."""
    if kind == "copy":
        return b["x"].clone()
    if kind == "relu":
        x = b["x"]
        return torch.where(x > 0, x, torch.zeros_like(x))
    g, r = b["g"], b["r"]
    return torch.where(r > 0, g, torch.zeros_like(g))


def check_peer(peer: Peer, b: dict) -> None:
    expected = reference(peer.expected, b)
    if peer.writes is not None:
        b[peer.writes].copy_(poison_like(expected))
    got = peer.call(b)
    result = b[peer.writes] if peer.writes is not None else got
    if not torch.equal(result, expected):
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


def run_point(ctx: Context, point: Point, cache_bytes: int, args) -> list[dict]:
    device = ctx.device
    dtype = DTYPES[point.dtype_name]
    numel = math.prod(point.shape)
    if point.op == "backward":
        roles, peers = ["g", "r"], backward_peers(ctx)
    else:
        roles, peers = ["x", "o"], forward_peers(ctx, dtype, point.with_compile)
        # Both forms everywhere, so that every pair exists: out= (relu_out, clamp_min_out,
        # copy_) and allocating (relu, torch.relu, clone).
        if point.op in ("latency",):
            peers = [p for p in peers if p.name in ("relu_out", "clamp_min_out", "copy_",
                                                   "relu", "torch.relu", "clone")]
        if point.op == "flat1d":
            peers = [p for p in peers if p.name in ("relu_out", "clamp_min_out", "row_per_block", "sse_baseline",
                                                   "copy_", "copy16", "relu", "torch.relu", "clone")]
        if args.l2_band:
            peers = [p for p in peers if p.name in L2_BAND_PEERS or baselines.is_triton_peer(p.name)]
        if point.op == "misaligned":  # the baselines and copy16 assume aligned operands
            peers = [p for p in peers if p.name not in ("sse_baseline", "row_per_block", "copy16")]
    bytes_per_set = numel * dtype.itemsize * len(roles)
    # The roles every form rotates: the inputs (x; backward: g and r). out= forms rotate o
    # as well; allocating forms write the allocator's block instead. Sizing the rotation on
    # the inputs keeps both forms' inputs beyond the cache. Sizing it on x + o, as the
    # sweeps in results/h200/final/ and results/cpu/ did, left the allocating forms' inputs
    # at 0.77-1.07x the H200's L2 at 1-16 MiB.
    input_bytes = numel * dtype.itemsize * (2 if point.op == "backward" else 1)
    result_bytes = numel * dtype.itemsize  # what an allocating form returns
    # Modes and their sets: hot = set 0; cold = sets whose inputs exceed 1.5x the cache;
    # rot = sets (x and o) within the cache, at the L2 band's sizes (--l2-band: every point).
    rotations = {"hot": 1}
    if point.op in ("forward", "backward", "misaligned") and not args.l2_band:
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

    base = dict(op=point.op, dtype=point.dtype_name, bytes=numel * dtype.itemsize, numel=numel,
                shape=list(point.shape))
    if point.op == "misaligned":
        base["offset_bytes"] = point.offset_bytes
    bytes_moved = numel * dtype.itemsize * (3 if point.op == "backward" else 2)
    records = []

    good = []
    for peer in peers:
        try:
            check_peer(peer, dict(first))
            good.append(peer)
        except Exception as exc:  # recorded and skipped; the sweep goes on
            records.append(dict(base, peer=peer.name, mode="check", error=f"{type(exc).__name__}: {exc}"))
            if peer.name in ("torch.compile", "compile(relu)"):
                ctx.compile_broken.add(peer.name)  # no point retrying a broken toolchain at every size
    synchronize(device)

    form_of = {p.name: p.form for p in peers}

    def emit(mode: str, samples: dict, calls: dict, sets: int):
        for name, values in samples.items():
            us = statistics.median(values) * 1e6
            form = form_of[name]
            # Memory one lap touches: out= forms their sets' inputs and outputs; allocating
            # forms their sets' inputs and one result block (the allocator's).
            footprint = sets * bytes_per_set if form == "out" else sets * input_bytes + result_bytes
            records.append(dict(base, peer=name, form=form, mode=mode, us=us, gbps=bytes_moved / us * 1e-3,
                                samples_us=[round(v * 1e6, 4) for v in values],
                                calls_per_sample=calls[name], footprint_bytes=footprint))

    host_min = args.min_sample_ms * 1e-3
    # Host-timed: CPU, every mode; CUDA, eager (hot set only), unless graph replay alone.
    host_modes = list(rotations) if device == "cpu" else ([] if args.l2_band else ["eager"])
    per_call_estimate = {}
    for mode in host_modes:
        count = 1 if mode == "eager" else rotations[mode]
        rotation = Rotation(buffers.sets[:count]) if count > 1 else None  # shared by the mode's peers
        samplers = {}
        for peer in good:
            try:
                s = HostSampler(peer.call, rotation or buffers.sets[:1], device)
                per_call_estimate.setdefault(peer.name, s.calibrate(host_min))
                samplers[peer.name] = s
            except Exception as exc:
                records.append(dict(base, peer=peer.name, mode=mode, error=f"{type(exc).__name__}: {exc}"))
        emit(mode, interleaved(samplers, args.repeats), {n: s.calls for n, s in samplers.items()}, count)

    if device == "cuda" and point.op != "latency":
        for mode in rotations:
            sets = buffers.sets[:rotations[mode]]
            samplers = {}
            for peer in good:
                try:
                    if args.graph_calls:
                        calls = args.graph_calls
                    else:
                        estimate = max(per_call_estimate.get(peer.name, 1e-5), 1e-6)
                        calls = max(args.min_graph_calls, min(2000, math.ceil(args.min_graph_ms * 1e-3 / estimate)))
                    calls = len(sets) * math.ceil(calls / len(sets))  # every set once per lap
                    samplers[peer.name] = GraphSampler(peer.call, sets, calls)
                except Exception as exc:
                    records.append(dict(base, peer=peer.name, mode=mode, error=f"{type(exc).__name__}: {exc}"))
                    torch.cuda.synchronize()
            emit(mode, interleaved(samplers, args.repeats), {n: s.calls for n, s in samplers.items()}, len(sets))
            del samplers
    del buffers
    if device == "cuda" and numel * dtype.itemsize >= 256 * MiB:
        torch.cuda.empty_cache()
    return records


# ----------------------------------------------------------------------------- driver

MISALIGNED_SIZES = [256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1 * GiB]


def misaligned_point(name: str, nbytes: int) -> Point:
    """x = base[1:]: one element into its buffer."""
    itemsize = DTYPES[name].itemsize
    return Point("misaligned", name, nbytes, (nbytes // itemsize,), offset_bytes=itemsize)


def build_points(device: str, cache_bytes: int, args) -> list[Point]:
    if args.misaligned:  # misaligned pairs, each beside its aligned point (the copy_ ceiling)
        names = args.dtypes or (QUICK_DTYPES if args.quick else ["float32", "float16", "bfloat16", "int8", "float64"])
        top = 1 * GiB if device == "cuda" else 64 * MiB
        sizes = sorted({parse_size(s) for s in args.sizes}) if args.sizes else (
            [1 * MiB, 64 * MiB] if args.quick else [s for s in MISALIGNED_SIZES if s <= top])
        return [p for name in names for nbytes in sizes if nbytes % DTYPES[name].itemsize == 0
                for p in (Point("forward", name, nbytes, shape_for(nbytes // DTYPES[name].itemsize)),
                          misaligned_point(name, nbytes))]
    if args.l2_band:  # forward only: the L2 band's sizes and dtypes, hot and rot
        names = args.dtypes or (QUICK_DTYPES if args.quick else L2_BAND_DTYPES)
        return [Point("forward", name, nbytes, shape_for(nbytes // DTYPES[name].itemsize))
                for name in names for nbytes in byte_sizes(device, cache_bytes, args)
                if nbytes % DTYPES[name].itemsize == 0]
    dtype_names = args.dtypes or (QUICK_DTYPES if args.quick else list(DTYPES))
    points = []
    for name in dtype_names:
        itemsize = DTYPES[name].itemsize
        sizes = byte_sizes(device, cache_bytes, args)
        if device == "cpu" and not args.sizes and not args.quick:
            sizes = sorted(set(sizes) | {n * itemsize for n in CPU_TARGET_NUMELS})
        keys = key_sizes(device, sizes, itemsize, args)
        for nbytes in sizes:
            if nbytes % itemsize:
                continue
            numel = nbytes // itemsize
            points.append(Point("forward", name, nbytes, shape_for(numel),
                                with_compile=not args.no_compile and nbytes in keys))
        for nbytes in sorted(keys):
            points.append(misaligned_point(name, nbytes))
        if not args.no_backward and DTYPES[name].is_floating_point:
            for nbytes in sorted(keys):
                points.append(Point("backward", name, nbytes, shape_for(nbytes // itemsize)))
        points.append(Point("latency", name, LATENCY_NUMEL * itemsize, (LATENCY_NUMEL,)))
    if "float32" in dtype_names and not args.quick:
        # Upstream's launch on a 1-D tensor: the whole tensor is one row, so one block.
        points.append(Point("flat1d", "float32", 64 * MiB, (16 * MiB,)))
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 dtypes, 3 sizes, 3 repeats")
    parser.add_argument("--l2-band", action="store_true",
                        help="only the L2 band: 256 KiB .. 32 MiB, float32/float16/bfloat16/int8, hot and rot, "
                             "out= against copy_/clamp_min/plain Triton and relu(x) against torch.relu; "
                             "CUDA: graph replay of 40 calls, median of 9 (quick: 2 sizes, 3 dtypes, 3 repeats)")
    parser.add_argument("--full", action="store_true", help="CPU: 4 KiB .. 1 GiB like the GPU sweep")
    parser.add_argument("--misaligned", action="store_true",
                        help="only misaligned pairs (x = base[1:]) beside their aligned points, 256 KiB .. 1 GiB "
                             "(CPU: .. 64 MiB), float32/float16/bfloat16/int8/float64 (quick: 1 and 64 MiB, 3 dtypes)")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), help="default: all (quick: 3)")
    parser.add_argument("--sizes", nargs="+", help="input sizes, e.g. 4KiB 64MiB 1GiB (overrides the set)")
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 7, quick 3)")
    parser.add_argument("--min-sample-ms", type=float, default=None,
                        help="host-timed sample length (default CPU 10, CUDA 2)")
    parser.add_argument("--min-graph-ms", type=float, default=0.2, help="GPU time per graph replay at least")
    parser.add_argument("--min-graph-calls", type=int, default=20)
    parser.add_argument("--graph-calls", type=int, default=None,
                        help="calls per graph, fixed (default: enough for --min-graph-ms; --l2-band 40)")
    parser.add_argument("--max-cold-sets", type=int, default=16384,
                        help="cap on rotated buffer sets (the cold footprint is recorded per point)")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--compile-everywhere", action="store_true",
                        help="torch.compile and backward at every size, not only the key sizes")
    parser.add_argument("--no-backward", action="store_true")
    parser.add_argument("--threads", type=int, default=None, help="CPU: torch.set_num_threads")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when other processes used more than this "
                             "share of the cores meanwhile (1 turns the check off)")
    parser.add_argument("--quiet-wait-s", type=float, default=20.0,
                        help="CPU: wait up to this long for a quiet machine before each point")
    parser.add_argument("--retries", type=int, default=2, help="CPU: measurements again of a contended point")
    parser.add_argument("--time-limit-s", type=float, default=None,
                        help="stop starting new points after this many seconds (what ran is saved)")
    parser.add_argument("--out", type=Path, default=None, help="directory for sweep.json (default results/<device>)")
    parser.add_argument("--kernel", type=Path, default=ROOT,
                        help="a checkout, its build/ or one variant directory (default: this checkout)")
    parser.add_argument("--print-out-dir", action="store_true", help="print the results directory and exit")
    args = parser.parse_args()
    if args.repeats is None:
        args.repeats = 3 if args.quick else (9 if args.l2_band else 7)
    if args.l2_band and args.graph_calls is None:
        args.graph_calls = 40
    if args.min_sample_ms is None:
        args.min_sample_ms = 10.0 if args.device == "cpu" else 2.0

    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    if args.print_out_dir:
        print(args.out or ROOT / "results" / device_label(device))
        return
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from kernels import get_local_kernel

    kernel = get_local_kernel(args.kernel, backend=device)
    ctx = Context(device=device, kernel=kernel, ops=kernel._ops.ops)
    if not args.l2_band:  # the L2 band has no upstream baseline and no copy16
        try:
            if device == "cpu":
                ctx.cpu_baselines = baselines.load_cpu_baselines()
            else:
                ctx.cuda_baselines = baselines.load_cuda_baselines()
        except Exception as exc:
            ctx.errors.append(f"baselines did not build: {type(exc).__name__}: {exc}")
            print(ctx.errors[-1], file=sys.stderr)
    if device != "cuda":
        triton_note = "not measured: the plain Triton peer runs on CUDA only"
    else:
        try:
            ctx.triton_relu = baselines.load_triton_relu()
            triton_note = baselines.TRITON_DESCRIPTION
        except Exception as exc:  # no Triton in this torch: the sweep goes on without it
            triton_note = f"not measured: Triton did not load ({type(exc).__name__}: {exc})"
    if ctx.triton_relu is None:
        print(f"plain Triton peer {triton_note}", file=sys.stderr)
    for attr in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, attr):
            setattr(torch._dynamo.config, attr, 64)

    cache_bytes = last_level_cache_bytes(device)
    label = device_label(device)
    out_dir = args.out or ROOT / "results" / label
    out_dir.mkdir(parents=True, exist_ok=True)
    out_file = out_dir / "sweep.json"
    meta = {
        "command": "python benchmarks/sweep.py " + " ".join(sys.argv[1:]),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "git": git_revision(),
        "device": label,
        "device_name": torch.cuda.get_device_name(0) if device == "cuda" else cpu_model(),
        "cache_bytes": cache_bytes,
        "cache": "L2" if device == "cuda" else "last-level cache",
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "kernel_id": getattr(ctx.ops, "name", kernel.__name__),
        "cpu_isa": ctx.ops.cpu_isa() if device == "cpu" and hasattr(ctx.ops, "cpu_isa") else None,
        "repeats": args.repeats,
        # What "cold" means for each form (older files lack this key: their rotation was
        # sized on x + o, so the allocating forms' inputs rotated over only ~0.75x that).
        "cold_rotation": "inputs > 1.5x cache for every form; out= forms rotate o too; "
                         "allocating forms write the allocator's block",
        "rot_rotation": "x and o sets within 0.75x the cache (2-40 sets), at the L2 band's sizes",
        "l2_band": args.l2_band,
        "graph_calls": args.graph_calls,
        "triton": triton_note,
        "loadavg_start": os.getloadavg(),
        "errors": ctx.errors,
    }
    points = build_points(device, cache_bytes, args)
    records: list[dict] = []

    def save(final: bool = False):
        if final:
            meta["loadavg_end"] = os.getloadavg()
        out_file.write_text(json.dumps({"meta": meta, "records": records}, indent=1) + "\n")

    try:
        from tqdm import tqdm
        progress = tqdm(points, unit="pt", dynamic_ncols=True)
    except ImportError:
        progress = points
    load = MachineLoad(args.quiet_share) if device == "cpu" and args.quiet_share < 1 else None
    started = time.time()
    for point in progress:
        if args.time_limit_s and time.time() - started > args.time_limit_s:
            meta["stopped_early"] = f"--time-limit-s {args.time_limit_s}: {len(points)} points planned"
            break
        if hasattr(progress, "set_postfix_str"):
            progress.set_postfix_str(f"{point.op} {point.dtype_name} {fmt_size(point.nbytes)}")
        try:
            records.extend(measure_when_quiet(lambda: run_point(ctx, point, cache_bytes, args), load,
                                              args.retries, args.quiet_wait_s))
        except Exception as exc:  # one bad point (e.g. out of memory) must not end the sweep
            records.append(dict(op=point.op, dtype=point.dtype_name, bytes=point.nbytes,
                                error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc(limit=3)))
            if device == "cuda":
                torch.cuda.empty_cache()
        save()
    meta["seconds"] = round(time.time() - started, 1)
    save(final=True)
    failures = [r for r in records if "error" in r]
    print(f"{len(records) - len(failures)} measurements, {len(failures)} errors -> {out_file}", file=sys.stderr)
    for r in failures[:20]:
        print(f"  {r.get('op')} {r.get('dtype')} {r.get('bytes')} {r.get('peer', '')} {r.get('mode', '')}: "
              f"{r['error']}", file=sys.stderr)


if __name__ == "__main__":
    main()
