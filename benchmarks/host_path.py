"""Which private torch names earn their place on relu()'s eager path: host time per call with each
one against its public replacement (docs/architecture.md, "Private torch names": a name stays
where it saves at least 10% of a small call).

    python benchmarks/host_path.py [--device cpu|cuda] [--build DIR] [--name NAME] [--out DIR]

A replica of relu()'s eager path (torch-ext/relu/_op_call.py) over the build's ops, all public;
each variant swaps in one private choice (the dual test must stay: the op alone would drop a
tangent silently):
  op       OpOverload._op, the C++ builtin      vs calling the OpOverload
  dual     forward_ad._current_level >= 0       vs forward_ad.unpack_dual(t).tangent is not None
  version  torch._C._increment_version((o,))    vs torch.autograd.graph.increment_version(o)
  apply    torch._C._FunctionBase's apply, after the functorch check and unwrap_if_dead (three
           names) vs autograd.Function.apply
Calls, float32, 1024 .. 65536 elements: relu(x); relu(x, out=o); relu(x) forward + backward
(x requires grad, torch.autograd.grad). Also the build's own relu() (`package`): run once per
build (two compiled builds of the same C++ share an op namespace, so one process loads one),
the replica's public path is the yardstick between runs. Interleaved samplers, medians
(benchmarks/timing.py). Printed: us per call and each private name's saving over the public
path; written: DIR/host_path_<device>[_NAME].json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.autograd import forward_ad

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import ROOT, load_build, relu_reference, random_tensor, run_meta, timed_us, write_results  # noqa: E402

SIZES = (1024, 4096, 16384, 65536)
CALLS = ("relu(x)", "relu(x, out=o)", "fwd+bwd")
VARIANTS = ("public", "op", "dual", "version", "apply")
# Where each private name is on the path.
ON_PATH = {"op": CALLS, "dual": CALLS, "version": ("relu(x, out=o)",), "apply": ("fwd+bwd",)}


def eager_path(ops, private: str = ""):
    """relu(x, out=None) as the package's eager path runs it (_op_call.py: the public function is
    the shared call itself; its autograd.Function), all public but `private`."""
    forward, forward_out, backward = ops.relu.default, ops.relu_out.default, ops.relu_backward.default
    if private == "op":
        forward, forward_out, backward = forward._op, forward_out._op, backward._op
    is_grad_enabled, is_compiling = torch.is_grad_enabled, torch.compiler.is_dynamo_compiling
    bump = torch.autograd.graph.increment_version
    if private == "version":
        increment_version = torch._C._increment_version

        def bump(out):
            increment_version((out,))

    class Relu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, name):
            result = forward(x)
            ctx.save_for_backward(result)
            ctx.name = name
            return result

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            if is_grad_enabled() or is_compiling():
                return torch.where(result > 0, grad, 0), None
            return backward(grad, result), None

    apply = Relu.apply
    if private == "apply":
        base_apply = torch._C._FunctionBase.__dict__["apply"].__get__(None, Relu)
        transforms_active, unwrap_if_dead = torch._C._are_functorch_transforms_active, torch._C._functorch.unwrap_if_dead

        def apply(x, name):
            return Relu.apply(x, name) if transforms_active() else base_apply(unwrap_if_dead(x), name)

    def differentiable(x, extra):
        if x.requires_grad and not x.dtype.is_floating_point:
            raise TypeError("no gradient")
        return apply(x, "relu", *extra)

    def fail(out):
        raise RuntimeError("out= under autograd")

    def tangent(t):
        return forward_ad.unpack_dual(t).tangent is not None

    # The two dual-level tests, each written out in its own copy of the call, as the package does.
    def call_public(x, out=None, *extra):
        try:
            if is_compiling():
                raise AssertionError("eager only")
            if out is None:
                if (x.requires_grad and is_grad_enabled()) or tangent(x):
                    return differentiable(x, extra)
                return forward(x, *extra) if extra else forward(x)
            if ((x.requires_grad or out.requires_grad) and is_grad_enabled()) or tangent(x) or tangent(out):
                fail(out)
            forward_out(out, x, *extra) if extra else forward_out(out, x)
            bump(out)
            return out
        except ValueError:
            raise

    def call_level(x, out=None, *extra):
        try:
            if is_compiling():
                raise AssertionError("eager only")
            if out is None:
                if (x.requires_grad and is_grad_enabled()) or forward_ad._current_level >= 0:
                    return differentiable(x, extra)
                return forward(x, *extra) if extra else forward(x)
            if ((x.requires_grad or out.requires_grad) and is_grad_enabled()) or forward_ad._current_level >= 0:
                fail(out)
            forward_out(out, x, *extra) if extra else forward_out(out, x)
            bump(out)
            return out
        except ValueError:
            raise

    return call_level if private == "dual" else call_public


def calls_of(relu, x, o, leaf, grad) -> dict:
    """{call: fn()}, each checked against the definition once."""
    expected = relu_reference(x)
    assert torch.equal(relu(x), expected) and torch.equal(relu(x, out=o.fill_(1)), expected)
    (grad_x,) = torch.autograd.grad(relu(leaf), leaf, grad)
    assert torch.equal(grad_x, torch.where(x > 0, grad, 0))
    return {"relu(x)": lambda: relu(x), "relu(x, out=o)": lambda: relu(x, out=o),
            "fwd+bwd": lambda: torch.autograd.grad(relu(leaf), leaf, grad)}


def table(records: list[dict], peers: list[str]) -> str:
    lines = ["| call | elements | " + " | ".join(f"{p} us" for p in peers)
             + " | " + " | ".join(f"{v} saves" for v in ON_PATH) + " |"]
    lines.append("|---" * (2 + len(peers) + len(ON_PATH)) + "|")
    for r in records:
        us = r["us"]
        saves = [f"{1 - us[v] / us['public']:+.1%}" if r["call"] in ON_PATH[v] else "" for v in ON_PATH]
        lines.append(f"| {r['call']} | {r['elements']} | " + " | ".join(f"{us[p]:.2f}" for p in peers)
                     + " | " + " | ".join(saves) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--build", type=Path, default=ROOT / "build", help="the build timed (default: build/)")
    parser.add_argument("--name", default="", help="suffix of the results file (e.g. before)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls-per-sample", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "studies" / "host-path")
    args = parser.parse_args()
    device = args.device
    kernel = load_build(args.build, device)
    paths = {v: eager_path(kernel._ops.ops, "" if v == "public" else v) for v in VARIANTS}
    paths["package"] = kernel.relu
    meta = run_meta(device, kernel, build=str(args.build), repeats=args.repeats, calls_per_sample=args.calls_per_sample)
    out, records = args.out / f"host_path_{device}{'_' + args.name if args.name else ''}.json", []
    for elements in SIZES:
        x = random_tensor((elements,), torch.float32, device)
        o, grad = torch.empty_like(x), random_tensor((elements,), torch.float32, device)
        leaf = x.clone().requires_grad_(True)
        made = {name: calls_of(relu, x, o, leaf, grad) for name, relu in paths.items()}
        for call in CALLS:
            timed = timed_us({name: fns[call] for name, fns in made.items()}, device, "host", args.repeats,
                             args.calls_per_sample // (4 if call == "fwd+bwd" else 1))
            records.append(dict(call=call, elements=elements, dtype="float32", **timed))
            print(table(records[-1:], list(paths)).splitlines()[-1], flush=True)
            write_results(out, meta, records)
    print(f"{meta['machine']}, torch {meta['torch']}\n{table(records, list(paths))}\n-> {out}")


if __name__ == "__main__":
    main()
