"""relu_and_mul and relu_squared_and_mul against their peers, like with like, in one run on the
device it runs on.

    python benchmarks/gated.py --device cuda --out DIR             # the H200: 5-6 minutes (estimate)
    python benchmarks/gated.py --device cuda --quick --out DIR     # smoke run
    python benchmarks/gated.py --device cpu --out DIR              # 2-core CPU: 4 minutes and the waits
    python benchmarks/gated.py --device cpu --quick --quiet-share 1 --out /tmp/gated

x [rows, 2d] -> [rows, d], a = x[..., :d], b = x[..., d:]: x of ROWS x --cols (2d = 8192; one
row of fewer elements below that), sizes of x 64 KiB .. 1 GiB (CPU .. 64 MiB), and one MLP
shape, --mlp-rows x --mlp-cols (2d = 2 x 14336, Llama-3-8B's intermediate size); bfloat16 and
float32, modes cold and hot. Each form is compared only within itself; every peer allocates:
Forward ("forward"):
  relu_and_mul          relu_and_mul(x) ["relu_and_mul"]; F.relu(a) * b ["eager"]; its
                        torch.compile, static shape ["compile"]
  fatrelu_and_mul       relu_and_mul(x, threshold=t) ["relu_and_mul_t"]; F.threshold(a, t, 0) * b
                        ["eager_t"]; its compile ["compile_t"]; kernels-community/activation's
                        fatrelu_and_mul as its FatreluAndMul layer calls it (into torch.empty;
                        CUDA, built by benchmarks/peers/activation_build.py) ["activation"]
  relu_squared_and_mul  relu_squared_and_mul(x) ["relu_squared_and_mul"]; F.relu(a).square() * b
                        ["eager_sq"]; its compile ["compile_sq"]
Forward + backward of the layer ("forward+backward"), eager, 64 KiB up: x requires grad,
y = layer(x), y.backward(g) with a fixed g, x.grad set to None first; ours against an nn.Module
doing the eager form and that module's torch.compile (static shape):
  ReGLU ["ReGLU", "eager_reglu", "compile_reglu"]; FatreluAndMul with its threshold attribute t
  ["FatreluAndMul", "eager_fatrelu", "compile_fatrelu"]; SReGLU ["SReGLU", "eager_sreglu",
  "compile_sreglu"].
Against kernels-community/activation ("activation-check", CUDA), before any timing:
relu_and_mul(x, threshold=t) and fatrelu_and_mul(out, x, t) bit for bit, float32 / float16 /
bfloat16, on NaN-free inputs (random rows of several widths and every pair of specials: +-0,
+-inf, subnormals, the largest finite, t and its neighbours) for several t, and on inputs with
NaN in a, in b, in both (payloads and signs), and t = NaN; the differences are counted, with
examples.

Timing as benchmarks/relu_squared.py (harness.py, timing.py), peers interleaved (A B C C B A
...), medians of --repeats: CUDA forward GPU time from CUDA-graph replay, and host time at the
smallest size; CUDA forward + backward GPU time of calls queued behind a GPU sleep; CPU host time
of calibrated loops. hot = one buffer set; cold = sets rotated whose inputs (x; fwd+bwd x and g)
exceed 1.5x the last-level cache.
Every peer is checked first, against the definition in float64, rounded to float32 where the
definition's float32 compute rounds (a product of two float32 values is exact in float64) and
once to the dtype: bit-equal ("exact": true), else within bfloat16's tolerance, else recorded
with its error and not timed. Gradients alike: grad_a = a > t ? g * b : 0 (squared: a > 0 ?
((2a) * b) * g : 0), grad_b = g * gate(a).
Ratios: peer time / ours (above 1.00x: ours is faster).
Results: <out>/gated.json (timing.py's format), rewritten after every point, and <out>/gated.md.
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
from relu_squared_standin import load_kernel, standin_fatrelu_and_mul, wants_standin  # noqa: E402
from timing import (  # noqa: E402
    ROOT, GiB, KiB, MiB, Buffers, cold_sets, last_level_cache_bytes, parse_size, random_fill, run_meta, synchronize,
)

DTYPES = {name: getattr(torch, name) for name in ("bfloat16", "float32", "float16")}
FORWARD_SIZES = {"cuda": [64 * KiB, MiB, 16 * MiB, 64 * MiB, 256 * MiB, GiB],
                 "cpu": [64 * KiB, MiB, 16 * MiB, 64 * MiB]}
TRAIN_SIZES = {"cuda": [64 * KiB, 16 * MiB, 256 * MiB, GiB], "cpu": [64 * KiB, MiB, 16 * MiB]}
QUICK_FORWARD = {"cuda": [64 * KiB, 16 * MiB], "cpu": [64 * KiB, MiB]}
QUICK_TRAIN = {"cuda": [64 * KiB], "cpu": [64 * KiB]}
MLP_ROWS = {"cuda": 4096, "cpu": 256}  # bfloat16: 224 MiB on the GPU, 14 MiB on the CPU
QUICK_MLP_ROWS = {"cuda": 64, "cpu": 8}
# Bytes a call moves, in units of x's bytes, for the GB/s column: forward reads x, writes y
# (half of x); forward + backward also reads g (half) and x, writes dx (the layers save x).
PASSES = {"forward": 1.5, "forward+backward": 4.0}
# form -> (gate, threshold or None for --threshold): what the form's reference computes.
GATES = {"relu_and_mul": ("relu", 0.0), "fatrelu_and_mul": ("relu", None), "relu_squared_and_mul": ("squared", 0.0),
         "ReGLU": ("relu", 0.0), "FatreluAndMul": ("relu", None), "SReGLU": ("squared", 0.0)}
OURS = {"relu_and_mul": "relu_and_mul", "fatrelu_and_mul": "relu_and_mul_t",
        "relu_squared_and_mul": "relu_squared_and_mul", "ReGLU": "ReGLU", "FatreluAndMul": "FatreluAndMul",
        "SReGLU": "SReGLU"}


def shape_for(numel: int, cols: int) -> tuple[int, int]:
    return (numel // cols, cols) if numel >= cols else (1, numel)


def halves(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    d = x.shape[-1] // 2
    return x[..., :d], x[..., d:]


def as_float32(t: float) -> float:
    """The threshold as the float32 compute takes it."""
    return float(torch.tensor(t, dtype=torch.float32))


def reference(x: torch.Tensor, gate: str, threshold: float) -> torch.Tensor:
    """gate(a) * b in float64, rounded to float32 where the float32 definition rounds (a*a of
    the squared gate; exact for float16 / bfloat16), then once to x's dtype."""
    a, b = halves(x.detach().double())
    zero = torch.zeros((), dtype=torch.float64, device=x.device)
    act = torch.where(a > 0, (a * a).float().double(), zero) if gate == "squared" else torch.where(
        a > as_float32(threshold), a, zero)
    return (act * b).to(x.dtype)


def reference_grad(g: torch.Tensor, x: torch.Tensor, gate: str, threshold: float) -> torch.Tensor:
    """[grad_a, grad_b] as reference() computes: grad_a = a > t ? g * b : 0 (squared: a > 0 ?
    ((2a) * b) * g : 0), grad_b = g * gate(a)."""
    a, b = halves(x.detach().double())
    gd, zero = g.double(), torch.zeros((), dtype=torch.float64, device=x.device)
    f32 = lambda v: v.float().double()  # noqa: E731  (a float32 rounding of the compute)
    if gate == "squared":
        grad_a = torch.where(a > 0, f32(f32(2 * a * b) * gd), zero)
        grad_b = gd * torch.where(a > 0, f32(a * a), zero)
    else:
        t = as_float32(threshold)
        grad_a = torch.where(a > t, gd * b, zero)
        grad_b = gd * torch.where(a > t, a, zero)
    return torch.cat([grad_a, grad_b], dim=-1).to(x.dtype)


# ----------------------------------------------------------------------------- peers

def eager_relu(x):
    a, b = halves(x)
    return F.relu(a) * b


def eager_threshold(x, t):
    a, b = halves(x)
    return F.threshold(a, t, 0.0) * b


def eager_squared(x):
    a, b = halves(x)
    return F.relu(a).square() * b


class TorchGated(nn.Module):
    """An eager MLP's activation (vLLM's forward_native): the torch ops of `fn`."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def activation_call(fatrelu_and_mul, t: float):
    """kernels-community/activation's FatreluAndMul.forward, as its layers.py writes it."""
    def call(b):
        x = b["x"]
        if not x.is_contiguous():
            x = x.contiguous()
        out = torch.empty(x.shape[:-1] + (x.shape[-1] // 2,), dtype=x.dtype, device=x.device)
        return fatrelu_and_mul(out, x, t)

    return call


def forward_peers(kernel, activation, t: float, with_compile: bool) -> list[Peer]:
    peers = [
        Peer("relu_and_mul", "relu_and_mul", lambda b: kernel.relu_and_mul(b["x"])),
        Peer("eager", "relu_and_mul", lambda b: eager_relu(b["x"])),
        Peer("relu_and_mul_t", "fatrelu_and_mul", lambda b: kernel.relu_and_mul(b["x"], threshold=t)),
        Peer("eager_t", "fatrelu_and_mul", lambda b: eager_threshold(b["x"], t)),
        Peer("relu_squared_and_mul", "relu_squared_and_mul", lambda b: kernel.relu_squared_and_mul(b["x"])),
        Peer("eager_sq", "relu_squared_and_mul", lambda b: eager_squared(b["x"])),
    ]
    if activation is not None:
        peers.append(Peer("activation", "fatrelu_and_mul", activation_call(activation, t)))
    if with_compile:
        torch._dynamo.reset()  # one static shape at a time: no recompile limit reached
        for name, form, fn in (("compile", "relu_and_mul", eager_relu),
                               ("compile_t", "fatrelu_and_mul", lambda x: eager_threshold(x, t)),
                               ("compile_sq", "relu_squared_and_mul", eager_squared)):
            compiled = torch.compile(fn, dynamic=False)
            peers.append(Peer(name, form, lambda b, compiled=compiled: compiled(b["x"])))
    return peers


def layer_peers(kernel, t: float, with_compile: bool) -> list[Peer]:
    fatrelu = kernel.layers.FatreluAndMul()
    fatrelu.threshold = t  # the attribute the replaced module (vLLM's FatreluAndMul) carries
    modules = [("ReGLU", "ReGLU", kernel.layers.ReGLU()), ("eager_reglu", "ReGLU", TorchGated(eager_relu)),
               ("FatreluAndMul", "FatreluAndMul", fatrelu),
               ("eager_fatrelu", "FatreluAndMul", TorchGated(lambda x: eager_threshold(x, t))),
               ("SReGLU", "SReGLU", kernel.layers.SReGLU()), ("eager_sreglu", "SReGLU", TorchGated(eager_squared))]
    if with_compile:
        torch._dynamo.reset()
        modules += [(name.replace("eager", "compile"), form, torch.compile(module, dynamic=False))
                    for name, form, module in list(modules) if name.startswith("eager")]

    def step(module):
        def run(b):
            x = b["x"]
            x.grad = None
            y = module(x)
            y.backward(b["g"])
            return y

        return run

    return [Peer(name, form, step(module)) for name, form, module in modules]


def check_layer(peer: Peer, b: dict, gate: str, t: float) -> dict:
    x = b["x"]
    y = peer.call(b).detach()
    expected_grad = reference_grad(b["g"], x, gate, t)
    exact_y = matches(y, reference(x, gate, t))
    exact_grad = torch.equal(x.grad, expected_grad)
    if not exact_grad:
        torch.testing.assert_close(x.grad, expected_grad, rtol=1.6e-2, atol=1e-5)
    return {"exact": exact_y, "grad_exact": exact_grad,
            "grad_max_abs_diff": (x.grad.double() - expected_grad.double()).abs().max().item()}


# ----------------------------------------------------------------------------- against kernels-community

BITS = {2: torch.int16, 4: torch.int32}
CHECK_SHAPES = [(1024, 2 * 4096), (33, 2 * 1000), (3, 2 * 5000), (1, 2 * 7)]  # one block per row; d > 1024 loops


def specials(dtype: torch.dtype, t: float, nan: bool) -> torch.Tensor:
    """Values where the gate or the product is delicate, and with `nan` NaN of both signs and a
    payload."""
    info = torch.finfo(dtype)
    values = [0.0, -0.0, math.inf, -math.inf, 1.0, -1.0, 0.5, 3.0, info.max, -info.max, info.tiny, -info.tiny,
              info.tiny * info.eps, -info.tiny * info.eps, t, -t]
    out = torch.tensor(values, dtype=torch.float32).to(dtype)
    if t != 0.0:  # t's neighbours in the dtype
        bits = torch.tensor([t], dtype=torch.float32).to(dtype).view(BITS[dtype.itemsize])
        out = torch.cat([out, torch.cat([bits - 1, bits + 1]).view(dtype)])
    if nan:
        payload = torch.tensor([0x7F800001 if dtype == torch.float32 else 0x7C01 if dtype == torch.float16
                                else 0x7F81], dtype=BITS[dtype.itemsize]).view(dtype)
        out = torch.cat([out, torch.tensor([math.nan, -math.nan], dtype=torch.float32).to(dtype), payload, -payload])
    return out


def pairs(values: torch.Tensor) -> torch.Tensor:
    """x [m, 2m] whose (a, b) are every pair of `values`."""
    m = values.numel()
    return torch.cat([values.view(m, 1).expand(m, m), values.view(1, m).expand(m, m)], dim=-1).contiguous()


def compare(ours: torch.Tensor, theirs: torch.Tensor, x: torch.Tensor, limit: int = 6) -> dict:
    """Elements whose bits differ; of those, the ones where both are NaN (another sign or
    payload); and those whose values differ (NaN equal to NaN, -0 to +0); up to `limit`
    examples as hex bits."""
    bits = BITS[ours.element_size()]
    mask = 0xFFFF if bits == torch.int16 else 0xFFFFFFFF
    bit_diff = ours.view(bits) != theirs.view(bits)
    both_nan = ours.isnan() & theirs.isnan()
    value_diff = ~((ours == theirs) | both_nan)
    a, b = halves(x)
    examples = []
    for i in bit_diff.nonzero()[:limit].tolist():
        i = tuple(i)
        examples.append({key: f"{int(t[i].view(bits)) & mask:0{2 * ours.element_size()}x}"
                         for key, t in (("a", a), ("b", b), ("ours", ours), ("theirs", theirs))})
    return {"elements": ours.numel(), "bit_differences": int(bit_diff.sum()),
            "nan_bit_differences": int((bit_diff & both_nan).sum()), "value_differences": int(value_diff.sum()),
            "examples": examples}


def activation_check(kernel, activation, dtype_name: str, t: float, device: str) -> list[dict]:
    dtype = DTYPES[dtype_name]
    cases = []  # (inputs, threshold, x)
    for threshold in sorted({0.0, t, -1.0, 1.5, 1e-3}):
        for shape in CHECK_SHAPES:
            cases.append(("random", threshold, random_fill(torch.empty(shape, dtype=dtype, device=device))))
        cases.append(("specials", threshold, pairs(specials(dtype, threshold, False)).to(device)))
        cases.append(("nan-specials", threshold, pairs(specials(dtype, threshold, True)).to(device)))
        x = random_fill(torch.empty(CHECK_SHAPES[0], dtype=dtype, device=device))
        a, b = halves(x)
        nan = torch.tensor([math.nan, -math.nan], dtype=torch.float32).to(dtype)
        a[::3, ::5], b[::7, ::3] = nan[0], nan[1]  # NaN in a, in b, in both
        cases.append(("nan-random", threshold, x))
    cases.append(("random, t = NaN", math.nan, random_fill(torch.empty(CHECK_SHAPES[1], dtype=dtype, device=device))))
    records = []
    for inputs, threshold, x in cases:
        base = dict(op="activation-check", dtype=dtype_name, bytes=x.numel() * x.element_size(), shape=list(x.shape),
                    inputs=inputs, threshold=threshold)
        try:
            ours = kernel.relu_and_mul(x, threshold=threshold)
            theirs = activation(torch.empty_like(ours), x, threshold)
            synchronize(device)
            records.append(dict(base, **compare(ours, theirs, x)))
        except Exception as exc:  # noqa: BLE001
            records.append(dict(base, error=f"{type(exc).__name__}: {exc}"))
    return records


def check_summary(records: list[dict]) -> list[str]:
    checks = [r for r in records if r["op"] == "activation-check" and "elements" in r]
    if not checks:
        return []
    lines = ["", "## relu_and_mul(x, threshold=t) against kernels-community/activation's fatrelu_and_mul", "",
             "| dtype | inputs | cases | elements | bits differ | of which both NaN | values differ |",
             "|---|---|---|---|---|---|---|"]
    groups = {}
    for r in checks:
        groups.setdefault((r["dtype"], r["inputs"]), []).append(r)
    for (dtype, inputs), rs in sorted(groups.items(), key=lambda kv: (list(DTYPES).index(kv[0][0]), kv[0][1])):
        lines.append(f"| {dtype} | {inputs} | {len(rs)} | {sum(r['elements'] for r in rs)} | "
                     f"{sum(r['bit_differences'] for r in rs)} | {sum(r['nan_bit_differences'] for r in rs)} | "
                     f"{sum(r['value_differences'] for r in rs)} |")
    nan_free = [r for r in checks if not r["inputs"].startswith("nan") and "NaN" not in r["inputs"]]
    bits = sum(r["bit_differences"] for r in nan_free)
    nan_bits = sum(r["nan_bit_differences"] for r in nan_free)
    values = sum(r["value_differences"] for r in nan_free)
    verdict = ("bit for bit equal in every case" if not bits else
               f"{bits} elements differ in their bits, {nan_bits} of them NaN in both (inf * 0: another NaN "
               f"pattern), {values} in value")
    lines += ["", f"NaN-free inputs ({len(nan_free)} cases): {verdict}. Inputs with NaN: the table's other rows."]
    examples = {}  # one line per dtype and (a, b, ours, theirs), the first case that showed it
    for r in checks:
        for e in r["examples"]:
            examples.setdefault((r["dtype"], *e.values()), f"{r['inputs']}, t = {r['threshold']}")
    if examples:
        lines += ["", "Where they differ (bits: a, b -> ours, theirs):", ""]
        lines += [f"- {dtype}: a {a}, b {b} -> {ours}, {theirs} ({case})"
                  for (dtype, a, b, ours, theirs), case in list(examples.items())[:16]]
    return lines


# ----------------------------------------------------------------------------- one point

def run_point(point: Point, kernel, activation, cache_bytes: int, args) -> list[dict]:
    device, dtype, t = args.device, DTYPES[point.dtype_name], args.threshold
    if point.op == "activation-check":
        return activation_check(kernel, activation, point.dtype_name, t, device)
    rows, cols = point.shape
    numel = rows * cols
    nbytes = numel * dtype.itemsize
    forward = point.op == "forward"
    roles = ["x"] if forward else ["x", "g"]
    # Cold: the inputs (x; fwd+bwd x and g) alone exceed 1.5x the cache.
    input_bytes = nbytes if forward else nbytes * 3 // 2
    rotations = {"cold": cold_sets(input_bytes, cache_bytes, args.max_cold_sets), "hot": 1}
    buffers = Buffers(roles, max(rotations.values()), {"x": point.shape, "g": (rows, cols // 2)}, dtype, device)
    for role in roles:
        random_fill(buffers.sets[0][role])
        buffers.pools[role][1:] = buffers.pools[role][0]  # every set holds set 0's data
    if not forward:  # each set's x its own leaf that requires grad
        buffers.sets = [{"x": s["x"].detach().requires_grad_(), "g": s["g"]} for s in buffers.sets]
    with_compile = not args.no_compile
    peers = forward_peers(kernel, activation, t, with_compile) if forward else layer_peers(kernel, t, with_compile)

    base = dict(op=point.op, dtype=point.dtype_name, bytes=nbytes, numel=numel, shape=list(point.shape))
    records = []
    for form in dict.fromkeys(p.form for p in peers):  # each form's peers interleaved among themselves
        gate, threshold = GATES[form]
        threshold = t if threshold is None else threshold
        hot = buffers.sets[0]
        if forward:
            expected = reference(hot["x"], gate, threshold)
            check = lambda peer: {"exact": matches(peer.call(hot), expected)}  # noqa: E731
        else:
            check = lambda peer: check_layer(peer, hot, gate, threshold)  # noqa: E731
        good, checks, failed = check_peers([p for p in peers if p.form == form], check, base)
        records += failed
        synchronize(device)
        records += time_peers(good, checks, buffers.sets, rotations, base, args, autograd=not forward,
                              traffic_bytes=int(PASSES[point.op] * nbytes), set_bytes=lambda _: input_bytes,
                              host=forward and point.nbytes == min(args.forward_sizes))
    del buffers
    if device == "cuda" and nbytes >= 256 * MiB:
        torch.cuda.empty_cache()
    return records


# ----------------------------------------------------------------------------- tables

LABEL = {
    "relu_and_mul": "relu_and_mul(x)", "eager": "F.relu(a) * b", "compile": "compile(F.relu(a) * b)",
    "relu_and_mul_t": "relu_and_mul(x, threshold=t)", "eager_t": "F.threshold(a, t, 0) * b",
    "compile_t": "compile(F.threshold(a, t, 0) * b)", "activation": "kernels-community fatrelu_and_mul",
    "relu_squared_and_mul": "relu_squared_and_mul(x)", "eager_sq": "F.relu(a).square() * b",
    "compile_sq": "compile(F.relu(a).square() * b)",
    "ReGLU": "layers.ReGLU", "eager_reglu": "F.relu(a) * b", "compile_reglu": "compile(F.relu(a) * b)",
    "FatreluAndMul": "layers.FatreluAndMul", "eager_fatrelu": "F.threshold(a, t, 0) * b",
    "compile_fatrelu": "compile(F.threshold(a, t, 0) * b)",
    "SReGLU": "layers.SReGLU", "eager_sreglu": "F.relu(a).square() * b",
    "compile_sreglu": "compile(F.relu(a).square() * b)",
}
FORMS = [("forward", "relu_and_mul", ("eager", "compile")),
         ("forward", "fatrelu_and_mul", ("activation", "eager_t", "compile_t")),
         ("forward", "relu_squared_and_mul", ("eager_sq", "compile_sq")),
         ("forward+backward", "ReGLU", ("eager_reglu", "compile_reglu")),
         ("forward+backward", "FatreluAndMul", ("eager_fatrelu", "compile_fatrelu")),
         ("forward+backward", "SReGLU", ("eager_sreglu", "compile_sreglu"))]


def markdown(meta: dict, records: list[dict]) -> str:
    lines = [f"# relu_and_mul, relu_squared_and_mul on {meta['machine']}", "",
             f"torch {meta['torch']}, triton {meta['triton']}; revision {meta['git']}; "
             f"kernel: {meta['kernel_source']}; "
             f"activation peer: {meta['activation']}; t = {meta['threshold']}; {meta['timing']}", "",
             "Times in us (median); ratios are peer / ours (above 1.00x: ours is faster). Sizes are x's, "
             "[rows x 2d]."]
    lines += check_summary(records)
    lines += tables(records, FORMS, LABEL, OURS, list(DTYPES), with_shape=True)
    if meta.get("stopped_early"):
        lines += ["", f"Stopped early: {meta['stopped_early']}"]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- driver

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1-2 sizes, a small MLP shape, 3 repeats")
    parser.add_argument("--parts", nargs="+", choices=["check", "forward", "training"],
                        default=["check", "forward", "training"])
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=["bfloat16", "float32"],
                        help="forward dtypes")
    parser.add_argument("--train-dtypes", nargs="+", choices=list(DTYPES), default=["bfloat16", "float32"])
    parser.add_argument("--sizes", nargs="+", help="forward sizes of x, e.g. 64KiB 64MiB 1GiB (overrides the set)")
    parser.add_argument("--train-sizes", nargs="+", help="forward+backward sizes of x (overrides the set)")
    parser.add_argument("--cols", type=int, default=8192, help="row length 2d of the sized points")
    parser.add_argument("--mlp-rows", type=int, default=None, help="rows of the MLP shape (0: none; default "
                        f"CUDA {MLP_ROWS['cuda']}, CPU {MLP_ROWS['cpu']}; quick {QUICK_MLP_ROWS})")
    parser.add_argument("--mlp-cols", type=int, default=2 * 14336, help="row length 2d of the MLP shape")
    parser.add_argument("--threshold", type=float, default=0.25, help="t of the threshold forms")
    parser.add_argument("--repeats", type=int, default=None, help="samples per peer (default 5; quick 3)")
    parser.add_argument("--min-graph-ms", type=float, default=1.0, help="CUDA: GPU time per graph replay at least")
    parser.add_argument("--min-graph-calls", type=int, default=10)
    parser.add_argument("--train-calls", type=int, default=None, help="CUDA fwd+bwd: calls per sample (default 20)")
    parser.add_argument("--min-sample-ms", type=float, default=None, help="host-timed sample (CPU 20, CUDA 2)")
    parser.add_argument("--max-cold-sets", type=int, default=None,
                        help="cap on rotated buffer sets (default 4096; quick 256)")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--no-activation", action="store_true", help="leave kernels-community/activation out")
    parser.add_argument("--threads", type=int, default=None, help="CPU: torch.set_num_threads")
    parser.add_argument("--quiet-share", type=float, default=0.1,
                        help="CPU: measure a point again when others used more than this share of the cores (1: off)")
    parser.add_argument("--time-limit-s", type=float, default=None,
                        help="start no new point after this many seconds (what ran is saved)")
    parser.add_argument("--kernel", type=Path, default=ROOT, help="a checkout, its build/ or a variant directory")
    parser.add_argument("--standin", action="store_true",
                        help="the torch stand-in instead of a build, and for kernels-community's kernel where it does "
                             "not build (tests the harness; RELU_SQUARED_STANDIN=1 too)")
    parser.add_argument("--out", type=Path, required=True, help="folder for gated.json and gated.md")
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
    mlp_rows = args.mlp_rows if args.mlp_rows is not None else (QUICK_MLP_ROWS if args.quick else MLP_ROWS)[device]
    for attr in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, attr):
            setattr(torch._dynamo.config, attr, 64)
    torch.manual_seed(0)

    kernel, source = load_kernel(args.kernel, device, args.standin,
                                 needs=("relu_and_mul", "relu_squared_and_mul", "layers.ReGLU",
                                        "layers.FatreluAndMul", "layers.SReGLU"))
    activation, activation_note = None, "not measured: --no-activation"
    if not args.no_activation:
        sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
        from activation_build import load as load_activation

        activation, activation_note = load_activation()
        if activation is None and wants_standin(args.standin):
            activation = standin_fatrelu_and_mul
            activation_note = f"stand-in (torch, benchmarks/relu_squared_standin.py); {activation_note}"
    print(f"activation peer: {activation_note}", file=sys.stderr, flush=True)
    cache_bytes = last_level_cache_bytes(device)
    timing = ("CUDA: forward GPU time per call from CUDA-graph replay, fwd+bwd GPU time of calls queued "
              "behind a GPU sleep; host time per call at the smallest size" if device == "cuda"
              else "host time of calibrated loops")
    meta = run_meta(device, kernel, kernel_source=source, activation=activation_note, threshold=args.threshold,
                    cache_bytes=cache_bytes, cols=args.cols, mlp_shape=[mlp_rows, args.mlp_cols],
                    repeats=args.repeats, timing=timing + f"; median of {args.repeats} samples",
                    ratio="peer us / ours (above 1: ours is faster)", passes_of_x_bytes=PASSES,
                    cold_rotation="inputs > 1.5x cache (capped at --max-cold-sets)",
                    reference="float64, rounded to float32 where the float32 definition rounds, once to the dtype")
    # The check first (seconds), then bfloat16, float32, float16, each forward then forward +
    # backward, sizes ascending: what a time limit cuts is the least asked-for.
    points = []
    if "check" in args.parts and activation is not None:
        points += [Point("activation-check", name, 0, ()) for name in ("float32", "float16", "bfloat16")]
    for name, dtype in DTYPES.items():
        def sized(sizes, op, dtype=dtype, name=name):
            shapes = [shape_for(n // dtype.itemsize, args.cols) for n in sizes]
            shapes += [(mlp_rows, args.mlp_cols)] if mlp_rows else []
            return sorted((Point(op, name, math.prod(s) * dtype.itemsize, s) for s in shapes), key=lambda p: p.nbytes)

        if "forward" in args.parts and name in args.dtypes:
            points += sized(args.forward_sizes, "forward")
        if "training" in args.parts and name in args.train_dtypes:
            points += sized(train_sizes, "forward+backward")
    run_points(points, lambda point: run_point(point, kernel, activation, cache_bytes, args), meta,
               args.out / "gated.json", args.out / "gated.md", markdown, args)


if __name__ == "__main__":
    main()
