"""relu_squared against its peers, like with like, in one run on the device it runs on.

    python benchmarks/relu_squared.py --device cuda --out DIR          # the H200: about 2.5 minutes
    python benchmarks/relu_squared.py --device cuda --quick --out DIR  # smoke run
    python benchmarks/relu_squared.py --device cpu --out DIR           # 2-core CPU: about 6 minutes
    python benchmarks/relu_squared.py --device cpu --quick --standin --quiet-share 1 --out /tmp/r2

Forward ("forward"), float32 / float16 / bfloat16, x of ROWS x --cols (a row of fewer elements
below that), sizes 4 KiB .. 1 GiB (CPU .. 64 MiB), modes cold and hot; two forms, each compared
only within itself:
  allocating   relu_squared(x) ["relu_squared"]; eager F.relu(x).square() ["eager"];
               torch.compile of F.relu(x).square(), static shape ["compile"]; Liger-Kernel's
               LigerReLUSquaredFunction (CUDA, when liger_kernel imports) ["liger"]
  out=         relu_squared(x, out=o) ["relu_squared_out"]; torch.clamp_min(x, 0, out=o) then
               o.square_() ["eager_out"]; the ceiling o.copy_(x), a copy of the same bytes ["copy_"]
Forward + backward of the layer ("forward+backward"), eager, bfloat16 / float32, 64 KiB up:
x requires grad, y = layer(x), y.backward(g) with a fixed g, x.grad set to None first;
layers.ReLUSquared ["ReLUSquared"], an nn.Module doing F.relu(x).square() ["eager"], Liger's
LigerReLUSquared ["liger"].

Timing (benchmarks/timing.py, harness.py), peers interleaved (A B C C B A ...), medians of --repeats:
  CUDA forward   GPU time per call from CUDA-graph replay (GraphSampler); at the smallest size
                 also host time per call, hot ("host": dispatch included)
  CUDA fwd+bwd   GPU time of calls queued behind a GPU sleep (QueuedSampler: autograd)
  CPU            host time of calibrated loops (HostSampler), each point measured again while
                 other processes took more than --quiet-share of the cores
  hot = one buffer set; cold = sets rotated, the least recently used next, whose inputs alone
  exceed 1.5x the last-level cache (L2 on the GPU). Allocating forms write the block the
  allocator hands back, so they are never compared with out= forms.
Every peer is checked first (out= peers into a poisoned o): exact against x > 0 ? x*x : 0
computed in float64 and rounded once, else within bfloat16's tolerance ("exact": false), else
recorded with its error and not timed. Gradients: within tolerance of 2*max(x, 0)*g.
Ratios: peer time / ours (above 1.00x: ours is faster).
Results: <out>/relu_squared.json (timing.py's format: meta with the machine, the software and
the revision; one record per peer, point and mode), rewritten after every point, and
<out>/relu_squared.md, the tables.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Peer, Point, check_peers, matches, run_points, tables, time_peers  # noqa: E402
from relu_squared_standin import load_kernel  # noqa: E402
from timing import (  # noqa: E402
    ROOT, GiB, KiB, MiB, Buffers, cold_sets, last_level_cache_bytes, parse_size, random_fill, run_meta, synchronize,
)

DTYPES = {name: getattr(torch, name) for name in ("float32", "float16", "bfloat16")}
FORWARD_SIZES = {"cuda": [4 * KiB, 64 * KiB, MiB, 16 * MiB, 64 * MiB, 256 * MiB, GiB],
                 "cpu": [4 * KiB, 64 * KiB, MiB, 16 * MiB, 64 * MiB]}
TRAIN_SIZES = {"cuda": [64 * KiB, MiB, 16 * MiB, 256 * MiB, GiB], "cpu": [64 * KiB, MiB, 16 * MiB]}
QUICK_FORWARD = {"cuda": [4 * KiB, MiB, 64 * MiB], "cpu": [4 * KiB, MiB]}
QUICK_TRAIN = {"cuda": [64 * KiB, 16 * MiB], "cpu": [64 * KiB]}
# Tensor passes a call makes, for the GB/s column: forward reads x, writes y; forward +
# backward reads x, writes y, reads g and x, writes dx (the layer saves x).
PASSES = {"forward": 2, "forward+backward": 5}
OURS = {"allocating": "relu_squared", "out": "relu_squared_out", "layer": "ReLUSquared"}


def shape_for(numel: int, cols: int) -> tuple[int, int]:
    # 2-D rows like an MLP's hidden activation; Liger launches one program per row.
    return (numel // cols, cols) if numel >= cols else (1, numel)


def reference(x: torch.Tensor) -> torch.Tensor:
    """x > 0 ? x*x : 0, in float64 and rounded once: the float32 product of two float16 /
    bfloat16 values is exact, so this equals the definition's float32-then-round."""
    xd = x.double()
    return torch.where(xd > 0, xd * xd, torch.zeros((), dtype=torch.float64, device=x.device)).to(x.dtype)


class TorchReLUSquared(nn.Module):
    """transformers' ReLUSquaredActivation, as eager torch computes it."""

    def forward(self, x):
        return F.relu(x).square()


def load_liger(device: str):
    """(LigerReLUSquaredFunction, LigerReLUSquared), or (None, reason): Liger is Triton on
    CUDA only."""
    if device != "cuda":
        return None, "not measured: Liger-Kernel runs on CUDA only"
    try:
        from liger_kernel.ops.relu_squared import LigerReLUSquaredFunction
    except Exception as exc:  # noqa: BLE001  (not installed, or a broken Triton: the others go on)
        return None, f"not measured: liger_kernel did not import ({type(exc).__name__}: {exc})"
    try:
        from liger_kernel.transformers.relu_squared import LigerReLUSquared
    except Exception:  # noqa: BLE001  (its transformers package imports more; the op is what counts)
        class LigerReLUSquared(nn.Module):
            def forward(self, x):
                return LigerReLUSquaredFunction.apply(x)
    import liger_kernel

    version = getattr(liger_kernel, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("liger-kernel")
    return (LigerReLUSquaredFunction, LigerReLUSquared), f"liger-kernel {version}"


def forward_peers(kernel, liger, with_compile: bool) -> list[Peer]:
    rs = kernel.relu_squared
    peers = [
        Peer("relu_squared", "allocating", lambda b: rs(b["x"])),
        Peer("eager", "allocating", lambda b: F.relu(b["x"]).square()),
        Peer("relu_squared_out", "out", lambda b: rs(b["x"], out=b["o"])),
        Peer("eager_out", "out", lambda b: torch.clamp_min(b["x"], 0, out=b["o"]).square_()),
        Peer("copy_", "out", lambda b: b["o"].copy_(b["x"])),
    ]
    if with_compile:
        torch._dynamo.reset()  # one static shape at a time: no recompile limit reached
        compiled = torch.compile(lambda x: F.relu(x).square(), dynamic=False)
        peers.append(Peer("compile", "allocating", lambda b: compiled(b["x"])))
    if liger is not None:
        function = liger[0]
        peers.append(Peer("liger", "allocating", lambda b: function.apply(b["x"])))
    return peers


def check_forward(peer: Peer, b: dict) -> bool:
    expected = reference(b["x"])
    if peer.name == "copy_":
        expected = b["x"]
    if peer.form == "out":
        b["o"].fill_(float("nan"))
        got = peer.call(b)
        assert got is None or got.data_ptr() == b["o"].data_ptr(), f"{peer.name}: out= returned another tensor"
        got = b["o"]
    else:
        got = peer.call(b)
    return matches(got, expected)


def layer_peers(kernel, liger) -> list[Peer]:
    modules = {"ReLUSquared": kernel.layers.ReLUSquared(), "eager": TorchReLUSquared()}
    if liger is not None:
        modules["liger"] = liger[1]()

    def step(module):
        def run(b):
            x = b["x"]
            x.grad = None
            y = module(x)
            y.backward(b["g"])
            return y

        return run

    return [Peer(name, "layer", step(m)) for name, m in modules.items()]


def check_layer(peer: Peer, b: dict) -> dict:
    x = b["x"]
    y = peer.call(b).detach()
    xd = x.detach().double()
    expected_grad = (2 * xd.clamp_min(0) * b["g"].double()).to(x.dtype)
    exact_y = matches(y, reference(x.detach()))
    exact_grad = torch.equal(x.grad, expected_grad)
    if not exact_grad:
        torch.testing.assert_close(x.grad, expected_grad, rtol=1.6e-2, atol=1e-5)
    return {"exact": exact_y, "grad_exact": exact_grad,
            "grad_max_abs_diff": (x.grad.double() - expected_grad.double()).abs().max().item()}


# ----------------------------------------------------------------------------- one point

def run_point(point: Point, kernel, liger, cache_bytes: int, args) -> list[dict]:
    device, dtype = args.device, DTYPES[point.dtype_name]
    numel = math.prod(point.shape)
    nbytes = numel * dtype.itemsize
    forward = point.op == "forward"
    roles = ["x", "o"] if forward else ["x", "g"]
    # Cold: the inputs (x; fwd+bwd x and g) alone exceed 1.5x the cache; out= forms rotate o too.
    input_bytes = nbytes * (1 if forward else 2)
    rotations = {"cold": cold_sets(input_bytes, cache_bytes, args.max_cold_sets), "hot": 1}
    buffers = Buffers(roles, max(rotations.values()), point.shape, dtype, device)
    for role in roles:
        random_fill(buffers.sets[0][role])
        buffers.pools[role][1:] = buffers.pools[role][0]  # every set holds set 0's data
    if not forward:  # each set's x its own leaf that requires grad
        buffers.sets = [{"x": s["x"].detach().requires_grad_(), "g": s["g"]} for s in buffers.sets]
    peers = forward_peers(kernel, liger, not args.no_compile) if forward else layer_peers(kernel, liger)

    base = dict(op=point.op, dtype=point.dtype_name, bytes=nbytes, numel=numel, shape=list(point.shape))
    check = ((lambda peer: {"exact": check_forward(peer, dict(buffers.sets[0]))}) if forward
             else (lambda peer: check_layer(peer, buffers.sets[0])))
    good, checks, records = check_peers(peers, check, base)
    synchronize(device)
    records += time_peers(good, checks, buffers.sets, rotations, base, args, autograd=not forward,
                          traffic_bytes=PASSES[point.op] * nbytes,
                          set_bytes=lambda form: nbytes * len(roles) if form == "out" else input_bytes,
                          host=forward and point.nbytes == min(args.forward_sizes))
    del buffers
    if device == "cuda" and nbytes >= 256 * MiB:
        torch.cuda.empty_cache()
    return records


# ----------------------------------------------------------------------------- tables

LABEL = {
    "relu_squared": "relu_squared(x)", "eager": "F.relu(x).square()", "compile": "compile(F.relu(x).square())",
    "liger": "Liger", "relu_squared_out": "relu_squared(x, out=o)", "eager_out": "clamp_min(out=o); o.square_()",
    "copy_": "o.copy_(x)", "ReLUSquared": "layers.ReLUSquared",
}
FORMS = [("forward", "allocating", ("eager", "compile", "liger")), ("forward", "out", ("eager_out", "copy_")),
         ("forward+backward", "layer", ("eager", "liger"))]


def markdown(meta: dict, records: list[dict]) -> str:
    """One table per op and form: ours in us, then each peer in us and peer / ours."""
    lines = [f"# relu_squared on {meta['machine']}", "",
             f"torch {meta['torch']}, triton {meta['triton']}, {meta['liger']}; revision {meta['git']}; "
             f"kernel: {meta['kernel_source']}; {meta['timing']}", "",
             "Times in us (median); ratios are peer / ours (above 1.00x: ours is faster)."]
    return "\n".join(lines + tables(records, FORMS, LABEL, OURS, list(DTYPES))) + "\n"


# ----------------------------------------------------------------------------- driver

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2-3 sizes, 3 repeats")
    parser.add_argument("--parts", nargs="+", choices=["forward", "training"], default=["forward", "training"])
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES), help="forward dtypes")
    parser.add_argument("--train-dtypes", nargs="+", choices=list(DTYPES), default=["bfloat16", "float32"])
    parser.add_argument("--sizes", nargs="+", help="forward sizes, e.g. 4KiB 64MiB 1GiB (overrides the set)")
    parser.add_argument("--train-sizes", nargs="+", help="forward+backward sizes (overrides the set)")
    parser.add_argument("--cols", type=int, default=4096, help="row length (Liger: at most 65536)")
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 5; quick 3)")
    parser.add_argument("--min-graph-ms", type=float, default=1.0, help="CUDA: GPU time per graph replay at least")
    parser.add_argument("--min-graph-calls", type=int, default=10)
    parser.add_argument("--train-calls", type=int, default=None, help="CUDA fwd+bwd: calls per sample (default 20)")
    parser.add_argument("--min-sample-ms", type=float, default=None, help="host-timed sample (CPU 20, CUDA 2)")
    parser.add_argument("--max-cold-sets", type=int, default=None,
                        help="cap on rotated buffer sets (default 4096; quick 256): at 4 KiB a lap of 4096 "
                             "sets is 16 MiB of inputs, inside an H200's L2 (footprint_bytes says)")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--no-liger", action="store_true", help="leave Liger-Kernel out")
    parser.add_argument("--threads", type=int, default=None, help="CPU: torch.set_num_threads")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when others used more than this share of the cores (1: off)")
    parser.add_argument("--time-limit-s", type=float, default=None,
                        help="start no new point after this many seconds (what ran is saved)")
    parser.add_argument("--kernel", type=Path, default=ROOT, help="a checkout, its build/ or a variant directory")
    parser.add_argument("--standin", action="store_true",
                        help="the torch stand-in instead of a build (tests the harness; RELU_SQUARED_STANDIN=1 too)")
    parser.add_argument("--out", type=Path, required=True, help="folder for relu_squared.json and .md")
    args = parser.parse_args()
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    if args.threads:
        torch.set_num_threads(args.threads)
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.min_sample_ms = args.min_sample_ms or (20.0 if device == "cpu" else 2.0)
    args.train_calls = args.train_calls or (5 if args.quick else 20)
    args.max_cold_sets = args.max_cold_sets or (256 if args.quick else 4096)
    args.forward_sizes = sorted({parse_size(s) for s in args.sizes} if args.sizes else
                                (QUICK_FORWARD if args.quick else FORWARD_SIZES)[device])
    train_sizes = sorted({parse_size(s) for s in args.train_sizes} if args.train_sizes else
                         (QUICK_TRAIN if args.quick else TRAIN_SIZES)[device])
    for attr in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, attr):
            setattr(torch._dynamo.config, attr, 64)
    torch.manual_seed(0)

    kernel, source = load_kernel(args.kernel, device, args.standin)
    liger, liger_note = (None, "not measured: --no-liger") if args.no_liger else load_liger(device)
    cache_bytes = last_level_cache_bytes(device)
    timing = ("CUDA: forward GPU time per call from CUDA-graph replay, fwd+bwd GPU time of calls queued "
              "behind a GPU sleep; host time per call at the smallest size" if device == "cuda"
              else "host time of calibrated loops")
    meta = run_meta(device, kernel, kernel_source=source, liger=liger_note, cache_bytes=cache_bytes,
                    cols=args.cols, repeats=args.repeats, timing=timing + f"; median of {args.repeats} samples",
                    ratio="peer us / ours (above 1: ours is faster)", passes=PASSES,
                    cold_rotation="inputs > 1.5x cache (capped at --max-cold-sets); out= forms rotate o too")
    # bfloat16 first, then float32, float16, each forward then forward + backward: what a time
    # limit cuts is the least asked-for.
    points = []
    for name in sorted(DTYPES, key=["bfloat16", "float32", "float16"].index):
        itemsize = DTYPES[name].itemsize
        if "forward" in args.parts and name in args.dtypes:
            points += [Point("forward", name, n, shape_for(n // itemsize, args.cols)) for n in args.forward_sizes]
        if "training" in args.parts and name in args.train_dtypes:
            points += [Point("forward+backward", name, n, shape_for(n // itemsize, args.cols)) for n in train_sizes]
    run_points(points, lambda point: run_point(point, kernel, liger, cache_bytes, args), meta,
               args.out / "relu_squared.json", args.out / "relu_squared.md", markdown, args)


if __name__ == "__main__":
    main()
