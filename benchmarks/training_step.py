"""Does kernelizing a model's ReLU with this package change an eager training step? Forward + backward of a transformer MLP block, Linear(d, 4d) -> ReLU -> Linear(4d, d), with
torch's nn.ReLU ("plain") and with the same model kernelized to this checkout's ReLU layer
("kernel": kernels.kernelize, Mode.TRAINING).

    python benchmarks/training_step.py                  # CPU
    python benchmarks/training_step.py --device cuda    # the current GPU
    python benchmarks/training_step.py --quick          # a smoke run

Method:
  - Both models hold the same weights. A step is: parameter grads set to None,
    y = block(x), y.backward(g) with a fixed g (no loss op in the timing).
  - Before timing, one step of each is compared: output and every gradient must be equal
    (the kernel and torch compute the same ReLU on finite data); the result is recorded.
  - A sample is a host-timed loop of steps at least --min-sample-ms long (CUDA: synchronize
    before the clock starts and before it stops), divided by its step count
    (benchmarks/timing.py's HostSampler).
  - plain and kernel alternate within each repeat, in A B then B A order on alternate
    repeats, so drift hits both alike; the figure is the median of the repeats.
  - "activation" times the part the kernel replaces on its own: forward + backward of the
    ReLU layer on the block's hidden activation (tokens x 4d), to show its share of a step.
  - "opt125m" (--workloads opt125m): a whole eager training step of an OPT-125m-shaped
    decoder (12 pre-LayerNorm layers, width 768, 12 heads, FFN 3072 with ReLU, vocabulary
    50272, tied head; batch 8 x 512 tokens, random weights): forward, cross-entropy, backward.
    A stand-in written here with torch's modules, not transformers' OPTForCausalLM, which the
    H200 image does not have; same shapes, same activation count (its 12 nn.ReLU kernelized).
  - --baseline <variant>: a third peer, "baseline", the same model kernelized to another
    build (e.g. main's), timed in the same loop.
Writes results/<device>/training_step.json (device "cpu", or the GPU's name, e.g. "h200").

    python benchmarks/training_step.py --device cuda --kernel <new> --baseline <old> \
        --shapes 4096x768 --dtypes bfloat16 --workloads activation opt125m --runs 3
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import ROOT, HostSampler, device_label, interleaved, load_build, run_meta, write_results  # noqa: E402

# (tokens, width) per device; the hidden width is 4 x width. CPU shapes keep a full run to
# about a minute on the 2-core dev machine; GPU shapes span launch-bound to bandwidth-bound.
SHAPES = {
    "cpu": [(256, 256), (1024, 512), (2048, 1024)],
    "cuda": [(1024, 1024), (4096, 2048), (8192, 4096), (16384, 4096)],
}
QUICK_SHAPES = {"cpu": [(256, 256)], "cuda": [(1024, 1024), (8192, 4096)]}
DTYPES = {"cpu": ["float32"], "cuda": ["bfloat16", "float32"]}


class MLPBlock(nn.Module):
    def __init__(self, width: int, relu: type[nn.Module]):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.act = relu()
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


class OPTDecoderLayer(nn.Module):
    """OPT's decoder layer (pre-LayerNorm, do_layer_norm_before=True), dropout off."""

    def __init__(self, width: int, heads: int, ffn: int, relu: type[nn.Module]):
        super().__init__()
        self.heads = heads
        self.self_attn_layer_norm = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out_proj = nn.Linear(width, width)
        self.final_layer_norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, ffn)
        self.activation_fn = relu()
        self.fc2 = nn.Linear(ffn, width)

    def forward(self, h):
        batch, tokens, width = h.shape
        q, k, v = self.qkv(self.self_attn_layer_norm(h)).view(batch, tokens, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        attention = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + self.out_proj(attention.transpose(1, 2).reshape(batch, tokens, width))
        return h + self.fc2(self.activation_fn(self.fc1(self.final_layer_norm(h))))


class OPTStandIn(nn.Module):
    """OPT-125m's shapes: 12 layers, width 768, 12 heads, FFN 3072, vocabulary 50272, 2048
    positions (+2, OPT's offset), the head tied to the embedding."""

    def __init__(self, relu: type[nn.Module], layers=12, width=768, heads=12, ffn=3072, vocab=50272, positions=2050):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, width)
        self.embed_positions = nn.Embedding(positions, width)
        self.layers = nn.ModuleList(OPTDecoderLayer(width, heads, ffn, relu) for _ in range(layers))
        self.final_layer_norm = nn.LayerNorm(width)

    def forward(self, ids):
        positions = torch.arange(2, ids.shape[1] + 2, device=ids.device)
        h = self.embed_tokens(ids) + self.embed_positions(positions)
        for layer in self.layers:
            h = layer(h)
        return self.final_layer_norm(h) @ self.embed_tokens.weight.t()


OPT_BATCH, OPT_TOKENS = 8, 512


def kernelizable_relu():
    from kernels import use_kernel_forward_from_hub

    @use_kernel_forward_from_hub("ReLU")
    class HubReLU(nn.ReLU):
        pass

    return HubReLU


class CheckoutLayerRepository:
    """A kernels layer repository for a checkout's (or variant's) build of one backend.
    kernels' LocalLayerRepository loads the machine's default backend (CUDA on a GPU
    machine); this one names it, so a CPU run on a GPU machine measures the CPU kernel."""

    def __init__(self, path: Path, backend: str):
        self.path, self.backend = path, backend
        self.layer_name = "ReLU"

    def load(self):
        from kernels import get_local_kernel

        return get_local_kernel(self.path, backend=self.backend).layers.ReLU

    def __str__(self):
        return f"{self.path} ({self.backend} build), layer ReLU"


def kernelized(model: nn.Module, device: str, path: Path) -> nn.Module:
    from kernels import Mode, kernelize, use_kernel_mapping

    with use_kernel_mapping({"ReLU": {device: CheckoutLayerRepository(path, device)}}, inherit_mapping=False):
        kernelize(model, mode=Mode.TRAINING, device=device, use_fallback=False)
    # The kernel maps NaN to 0 where nn.ReLU keeps it: proof the forward was replaced.
    probe = torch.tensor([float("nan"), 1.0], device=device)
    act = model.act if hasattr(model, "act") else model.layers[0].activation_fn
    assert act(probe).tolist() == [0.0, 1.0], "kernelize kept nn.ReLU's forward"
    return model


def make_step(module: nn.Module, x: torch.Tensor, grad: torch.Tensor):
    params = list(module.parameters())

    def step():
        for p in params:
            p.grad = None
        x.grad = None
        module(x).backward(grad)

    return step


def snapshot(module: nn.Module, x: torch.Tensor, grad: torch.Tensor) -> list[torch.Tensor]:
    for p in module.parameters():
        p.grad = None
    x.grad = None
    y = module(x)
    y.backward(grad)
    return [y.detach()] + [t.grad.detach().clone() for t in [x, *module.parameters()]]


def compare_interleaved(steps: dict, device: str, repeats: int, min_sample_s: float) -> dict:
    samplers = {name: HostSampler(step, device=device) for name, step in steps.items()}
    for sampler in samplers.values():
        sampler.calibrate(min_sample_s)
    samples = interleaved(samplers, repeats)
    return {
        name: {
            "median_us": statistics.median(s) * 1e6,
            "min_us": min(s) * 1e6,
            "samples_us": [round(v * 1e6, 3) for v in s],
            "steps_per_sample": samplers[name].calls,
        }
        for name, s in samples.items()
    }


def opt_step(model: nn.Module, ids: torch.Tensor):
    params = list(model.parameters())

    def step():
        for p in params:
            p.grad = None
        logits = model(ids)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]).float(), ids.view(-1))
        loss.backward()
        return logits.detach()

    return step


def run_opt(dtype_name: str, device: str, args) -> dict:
    """The OPT-125m-shaped step: plain, kernel (and baseline); logits compared bit for bit."""
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    plain = OPTStandIn(kernelizable_relu()).to(device=device, dtype=dtype)
    models = {"plain": plain, "kernel": kernelized(copy.deepcopy(plain), device, args.kernel)}
    if args.baseline:
        models["baseline"] = kernelized(copy.deepcopy(plain), device, args.baseline)
    ids = torch.randint(0, 50272, (OPT_BATCH, OPT_TOKENS), device=device)
    steps = {name: opt_step(model, ids) for name, model in models.items()}
    logits = {name: step() for name, step in steps.items()}
    equal = all(torch.equal(logits["plain"], v) for v in logits.values())
    timings = compare_interleaved(steps, device, args.repeats, args.min_sample_ms / 1e3)
    record = {"workload": "opt125m", "dtype": dtype_name, "batch": OPT_BATCH, "tokens": OPT_TOKENS,
              "equal_logits": equal, **timings}
    for name in timings:
        if name != "plain":
            record[f"{name}_over_plain"] = timings[name]["median_us"] / timings["plain"]["median_us"]
    return record


def run_workload(workload: str, dtype_name: str, tokens: int, width: int, device: str, args) -> dict:
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(0)
    plain_block = MLPBlock(width, kernelizable_relu()).to(device=device, dtype=dtype)
    blocks = {"plain": plain_block, "kernel": kernelized(copy.deepcopy(plain_block), device, args.kernel)}
    if args.baseline:
        blocks["baseline"] = kernelized(copy.deepcopy(plain_block), device, args.baseline)
    if workload == "mlp_block":
        modules = blocks
        x = torch.randn(tokens, width, device=device, dtype=dtype, requires_grad=True)
        grad = torch.randn(tokens, width, device=device, dtype=dtype)
    else:  # the ReLU layer alone, on the hidden activation
        modules = {name: block.act for name, block in blocks.items()}
        x = torch.randn(tokens, 4 * width, device=device, dtype=dtype, requires_grad=True)
        grad = torch.randn(tokens, 4 * width, device=device, dtype=dtype)

    plain_snapshot = snapshot(modules["plain"], x, grad)
    pairs = [pair for name in modules if name != "plain" for pair in zip(plain_snapshot, snapshot(modules[name], x, grad))]
    equal = all(torch.equal(a, b) for a, b in pairs)
    max_abs_diff = max((a.float() - b.float()).abs().max().item() for a, b in pairs)
    steps = {name: make_step(module, x, grad) for name, module in modules.items()}
    timings = compare_interleaved(steps, device, args.repeats, args.min_sample_ms / 1e3)
    record = {
        "workload": workload,
        "dtype": dtype_name,
        "tokens": tokens,
        "width": width,
        "hidden": 4 * width,
        "equal_outputs_and_grads": equal,
        "max_abs_diff": max_abs_diff,
        **{f"{name}": t for name, t in timings.items()},
    }
    for name in timings:
        if name != "plain":
            record[f"{name}_over_plain"] = timings[name]["median_us"] / timings["plain"]["median_us"]
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="one or two shapes, 3 repeats")
    parser.add_argument("--repeats", type=int, default=None, help="samples per variant (default 9, quick 3)")
    parser.add_argument("--min-sample-ms", type=float, default=None, help="default CPU 100, CUDA 20")
    parser.add_argument("--threads", type=int, default=None, help="CPU: torch.set_num_threads")
    parser.add_argument("--out", type=Path, default=None, help="default results/<device>/training_step.json")
    parser.add_argument("--kernel", type=Path, default=ROOT,
                        help="a checkout, its build/ or one variant directory (default: this checkout)")
    parser.add_argument("--baseline", type=Path, default=None, help="another build, timed as a third peer")
    parser.add_argument("--shapes", nargs="+", default=None, help="TOKENSxWIDTH ... instead of the device's list")
    parser.add_argument("--dtypes", nargs="+", default=None, help="instead of the device's list")
    parser.add_argument("--workloads", nargs="+", choices=["mlp_block", "activation", "opt125m"],
                        default=["mlp_block", "activation"])
    parser.add_argument("--runs", type=int, default=1, help="opt125m: measured this many times (median of runs)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    args.repeats = args.repeats or (3 if args.quick else 9)
    args.min_sample_ms = args.min_sample_ms or (100.0 if device == "cpu" else 20.0)
    kernel = load_build(args.kernel, device)
    out = args.out or ROOT / "results" / device_label(device) / "training_step.json"
    meta = run_meta(device, kernel, repeats=args.repeats, min_sample_ms=args.min_sample_ms,
                    baseline=str(args.baseline) if args.baseline else None)
    records = []
    shapes = (QUICK_SHAPES if args.quick else SHAPES)[device]
    if args.shapes:
        shapes = [tuple(int(n) for n in shape.split("x")) for shape in args.shapes]
    for dtype_name in args.dtypes or DTYPES[device]:
        for workload in args.workloads:
            runs = [lambda: run_opt(dtype_name, device, args)] * args.runs if workload == "opt125m" else [
                lambda shape=shape: run_workload(workload, dtype_name, *shape, device, args) for shape in shapes]
            for run in runs:
                r = run()
                records.append(r)
                shape = f"batch {OPT_BATCH} x {OPT_TOKENS}" if workload == "opt125m" else f"{r['tokens']} x {r['width']}"
                print(f"{workload:10s} {dtype_name:9s} {shape:14s} "
                      + "  ".join(f"{name} {r[name]['median_us']:10.1f} us" for name in ("plain", "kernel", "baseline")
                                  if name in r)
                      + "".join(f"  {k.removesuffix('_over_plain')}/plain {v:.3f}" for k, v in r.items()
                                if k.endswith("_over_plain"))
                      + f"  equal {r.get('equal_outputs_and_grads', r.get('equal_logits'))}", flush=True)
    write_results(out, meta, records)
    print(f"-> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
