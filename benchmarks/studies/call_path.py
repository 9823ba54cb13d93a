"""Study. Question: where does a small CPU call's time go, and why does relu(x) cost more
than torch.relu(x) at 4-32 KiB? Answered (PERFORMANCE.md, "Small calls"): the allocating
op's output comes through aoti_torch_empty_strided (torch's dispatcher), and the Python
wrapper adds the Dynamo check, the gradient checks and out='s version bump; the kernel
itself is about 0.1 us. Results: results/cpu-avx2/call_path.json,
results/h200/cpu-avx512/call_path.json, results/h200/cpu-avx512/final/call_path.json.

relu(x) and relu(x, out=o) beside torch.relu(x) and torch.clamp_min(x, 0, out=o), and each
layer of relu()'s path measured alone, on the CPU, in one process, interleaved
(A B C C B A ...), medians of the repeats.

    python benchmarks/studies/call_path.py            # -> results/cpu-<isa>/call_path.json
    python benchmarks/studies/call_path.py --kernel build/<variant> --sizes 1024 8192

Layers: the op's C++ builtin alone (relu.default._op(x): the boxed stable-ABI call, the
checks, the allocation, the kernel), the out= builtin alone (no allocation), the Python
pieces relu() adds (the Dynamo check, the version bump of out=), and torch's own allocation
(torch.empty_like) for scale. At 4 KiB the kernel itself is about 0.1 us of it.

--fallback NEW [--baseline OLD] [--device cuda|cpu]: the same question for a noarch variant
(torch-cuda, torch-cpu), whose ops are Python kernels registered through torch.library,
beside the variant before its eager path (OLD, e.g. main's staging) and torch:
  - "calls": host time per call of relu(x) and relu(x, out=o), NEW and OLD, beside
    torch.relu(x) and clamp_min(x, 0, out=o), float32 at 4 KiB-256 KiB, and the stages of a
    call measured alone: the op's round trip through torch.library (ops.relu's builtin: the
    dispatcher into the Python kernel and back), the kernel NEW's relu() calls instead (its
    eager kernel, no torch.library), the checks, fmax(x, 0) with the zero a 0-dim CPU
    tensor and a 0-dim device tensor, a bare Triton launch of the variant's own kernel on
    prepared integer views, and NEW forced onto Triton (FORCE_PATH);
  - "gpu" (CUDA): GPU time per call from CUDA-graph replay, NEW, OLD and torch like for
    like (relu(x) against torch.relu(x), relu(x, out=o) against clamp_min(out=)), dense
    float32 and bfloat16 at 256 KiB-1 GiB, int8 at 256 KiB and 256 MiB, and views of an
    8192 x 16384 float32 source (a chunk, its transpose, a stepped view).
  - "train" (--parts train; any variant, compiled ones too): forward + backward of relu on a
    4096 x 3072 bfloat16 leaf (CPU: 64 x 256 float32, where the host path shows) beside
    torch.relu, and the pieces of the path alone
    (autograd.Function.apply's Python classmethod and its C part, the eager kernels, the op
    through the dispatcher, torch.relu's backward kernel, the autograd engine's floor).
    python benchmarks/studies/call_path.py --fallback .cache/noarch/build/torch-cuda \
        --baseline .cache/noarch-main/build/torch-cuda --device cuda --out results/h200/host-cost/fallback.json
    python benchmarks/studies/call_path.py --variant build/<cu130 variant> --baseline <main's> \
        --device cuda --parts train --out results/h200/host-cost/train_stages.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import (ROOT, GraphSampler, HostSampler, KiB, MiB, cpu_model, git_revision,  # noqa: E402
                    interleaved, machine, medians)


def default_kernel() -> Path:
    return next((ROOT / "build").glob("torch-stable-abi*-cpu-*"))


# ---- --fallback: a noarch variant's call path.

FALLBACK_CALL_BYTES = (4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB)
FALLBACK_GPU_BYTES = (256 * KiB, 1 * MiB, 16 * MiB, 256 * MiB, 1024 * MiB)
FALLBACK_GPU_DTYPES = (torch.float32, torch.bfloat16, torch.int8)


def load_variant(variant_dir: Path):
    from kernels import get_local_kernel

    backend = json.loads((variant_dir / "metadata.json").read_text())["backend"]["type"]
    return get_local_kernel(variant_dir, backend=backend)


class Globals:
    """A loaded variant's functions.py, through relu()'s own globals: two builds of one
    compiled source share a module name (the op namespace hashes the compiled sources only),
    so sys.modules cannot tell their packages apart. Attribute writes go to that module."""

    def __init__(self, kernel):
        object.__setattr__(self, "_globals", kernel.relu.__globals__)

    def __getattr__(self, name):
        return self._globals[name]

    def __setattr__(self, name, value):
        self._globals[name] = value


def noarch_modules(kernel):
    """The loaded variant's _noarch.py and functions.py."""
    return sys.modules[f"{kernel.__name__}._noarch"], Globals(kernel)


class ForcedPath:
    """A call with the variant's FORCE_PATH set for the call (studies pin Triton with it)."""

    def __init__(self, module, path: str, fn):
        self.module, self.path, self.fn = module, path, fn

    def __call__(self):
        saved, self.module.FORCE_PATH = self.module.FORCE_PATH, self.path
        try:
            return self.fn()
        finally:
            self.module.FORCE_PATH = saved


def checked(peers: dict, x: torch.Tensor, like: dict) -> None:
    """Every peer that computes relu gives torch.relu's bits (NaN-free x) before it is timed."""
    expected = torch.relu(x)
    for name in like:
        assert torch.equal(peers[name](), expected), name


def fallback_calls(new, old, device: str, repeats: int, calls: int) -> list[dict]:
    noarch, functions = noarch_modules(new)
    ops = functions.ops
    eager_relu, eager_relu_out, _ = functions._relu_eager, functions._relu_out_eager, None
    rows = []
    for size in FALLBACK_CALL_BYTES:
        x = torch.randn(size // 4, device=device)
        o = torch.empty_like(x)
        cpu_zero, device_zero = torch.zeros(()), torch.zeros((), device=device)
        peers = {
            "torch.relu(x)": lambda: torch.relu(x),
            "new relu(x)": lambda: new.relu(x),
            "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o),
            "new relu(x, out=o)": lambda: new.relu(x, out=o),
            "stage: op through torch.library, relu(x)": lambda: ops.relu.default._op(x),
            "stage: op through torch.library, relu_out(o, x)": lambda: ops.relu_out.default._op(o, x),
            "stage: eager kernel, relu(x)": lambda: eager_relu(x),
            "stage: eager kernel, relu_out(o, x)": lambda: eager_relu_out(o, x),
            "stage: dtype check": lambda: noarch._check_dtype(x),
            "stage: out= checks": lambda: noarch._check_relu_args(o, x),
            "stage: fmax(x, cpu zero)": lambda: torch.fmax(x, cpu_zero),
            "stage: fmax(x, device zero)": lambda: torch.fmax(x, device_zero),
            "stage: torch.empty_like(x)": lambda: torch.empty_like(x),
        }
        like = ["new relu(x)", "stage: op through torch.library, relu(x)", "stage: eager kernel, relu(x)",
                "stage: fmax(x, cpu zero)", "stage: fmax(x, device zero)"]
        if old is not None:
            peers["old relu(x)"] = lambda: old.relu(x)
            peers["old relu(x, out=o)"] = lambda: old.relu(x, out=o)
            like.append("old relu(x)")
        if device == "cuda":
            triton = noarch._triton_kernels()
            bits, out_bits = x.view(torch.int32), o.view(torch.int32)
            _, mode, limit = noarch._rule(x.dtype)
            peers["stage: bare Triton launch"] = lambda: triton.relu_flat(bits, out_bits, x.numel(), mode, limit)
            peers["new relu(x) [Triton path]"] = ForcedPath(noarch, "triton", lambda: new.relu(x))
            peers["new relu(x, out=o) [Triton path]"] = ForcedPath(noarch, "triton", lambda: new.relu(x, out=o))
            like.append("new relu(x) [Triton path]")
        checked(peers, x, like)
        seconds = medians(interleaved({k: HostSampler(fn, device=device, calls=calls) for k, fn in peers.items()},
                                      repeats))
        us = {k: v * 1e6 for k, v in seconds.items()}
        rows.append(dict(kind="calls", dtype="float32", bytes=size, us=us))
        print(f"float32 {size // KiB} KiB, host us per call:")
        for k, v in us.items():
            print(f"  {k:48} {v:7.2f}")
    return rows


def fallback_gpu(new, old, repeats: int) -> list[dict]:
    rows = []

    def measure(kind: str, label: str, dtype, x: torch.Tensor, out: bool) -> None:
        o = torch.empty_like(x)
        if out:
            peers = {"new relu(x, out=o)": lambda: new.relu(x, out=o),
                     "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o)}
            if old is not None:
                peers["old relu(x, out=o)"] = lambda: old.relu(x, out=o)
        else:
            peers = {"new relu(x)": lambda: new.relu(x), "torch.relu(x)": lambda: torch.relu(x)}
            if old is not None:
                peers["old relu(x)"] = lambda: old.relu(x)
        expected = torch.relu(x)
        for name, fn in peers.items():
            result = fn() if not out else (fn(), o)[1]
            assert torch.equal(result, expected), name
        # Fewer captured calls for big tensors: each allocating call keeps its output in the graph's pool.
        calls = 20 if x.numel() * x.element_size() < 64 * MiB else 4
        us = {k: v * 1e6 for k, v in medians(interleaved({k: GraphSampler(fn, calls=calls) for k, fn in peers.items()},
                                                          repeats)).items()}
        ours, torch_peer = ("new relu(x, out=o)", "clamp_min(x, 0, out=o)") if out else ("new relu(x)", "torch.relu(x)")
        rows.append(dict(kind=kind, view=label, dtype=str(dtype).removeprefix("torch."),
                         bytes=x.numel() * x.element_size(), form="out=" if out else "relu(x)", us=us,
                         torch_over_new=us[torch_peer] / us[ours]))
        print(rows[-1], flush=True)

    for dtype in FALLBACK_GPU_DTYPES:
        for size in FALLBACK_GPU_BYTES if dtype.is_floating_point else FALLBACK_GPU_BYTES[::3]:
            numel = size // dtype.itemsize
            x = (torch.randn(numel, device="cuda").to(dtype) if dtype.is_floating_point
                 else torch.randint(-100, 100, (numel,), device="cuda", dtype=dtype))
            for out in (False, True):
                measure("dense", "dense", dtype, x, out)
            del x
            torch.cuda.empty_cache()
    source = torch.randn(8192, 16384, device="cuda")
    views = {"chunk x[:, :8192]": source[:, :8192], "transposed chunk x[:, :8192].t()": source[:, :8192].t(),
             "step x[:, ::2]": source[:, ::2]}
    for label, v in views.items():
        measure("views", label, torch.float32, v, False)
    return rows


def training_stages(new, old, device: str, repeats: int) -> list[dict]:
    """Forward + backward of relu on a 4096 x 3072 bfloat16 leaf (an OPT-125m FFN activation),
    x.grad reset each time as a training step does, beside torch.relu; then the pieces of
    NEW's path alone: autograd.Function.apply's Python classmethod and its C part, the op's
    forward and backward as eager calls run them, and torch.relu's backward kernel."""
    functions = Globals(new)
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    shape = (4096, 3072) if device == "cuda" else (64, 256)
    x = torch.randn(shape, device=device, dtype=dtype).requires_grad_(True)
    g = torch.randn(shape, device=device, dtype=dtype)
    r = torch.relu(x.detach())
    threshold_backward = torch.ops.aten.threshold_backward.default

    def step(relu):
        def run():
            x.grad = None
            relu(x).backward(g)
        return run

    peers = {
        "torch.relu forward + backward": step(torch.relu),
        "new relu forward + backward": step(new.relu),
        "torch.relu forward (recording)": lambda: torch.relu(x),
        "new relu forward (recording)": lambda: new.relu(x),
        "stage: _ReluFunction.apply (Python classmethod)": lambda: functions._ReluFunction.apply(x),
        "stage: autograd.Function apply, C part": lambda: functions._relu_function_apply(x),
        "stage: eager forward kernel, no grad": lambda: functions._relu_eager(x.detach()),
        "stage: eager backward kernel": lambda: functions._relu_backward_eager(g, r),
        "stage: op backward through the dispatcher": lambda: functions._relu_backward(g, r),
        "stage: threshold_backward (torch.relu's backward)": lambda: threshold_backward(g, r, 0),
        "stage: backward of a sum (engine floor)": lambda: x.sum().backward(),
    }
    if old is not None:
        peers["old relu forward + backward"] = step(old.relu)
        peers["old relu forward (recording)"] = lambda: old.relu(x)
    # An alternative measured beside the path: the backward through torch.relu's own kernel.
    new_step = step(new.relu)

    def zero_threshold(grad, result):
        return threshold_backward._op(grad, result, 0)

    def aten_backward_step():
        saved, functions._relu_backward_eager = functions._relu_backward_eager, zero_threshold
        try:
            new_step()
        finally:
            functions._relu_backward_eager = saved

    peers["new relu forward + backward [backward: threshold_backward]"] = aten_backward_step
    for fn in peers.values():
        fn()
    seconds = medians(interleaved({k: HostSampler(fn, device=device, calls=200) for k, fn in peers.items()}, repeats))
    us = {k: v * 1e6 for k, v in seconds.items()}
    print(f"training, {str(dtype).removeprefix('torch.')} {shape[0]} x {shape[1]}, host-timed us per call:")
    for k, v in us.items():
        print(f"  {k:52} {v:8.2f}")
    return [dict(kind="train", dtype=str(dtype).removeprefix("torch."), shape=list(shape), us=us)]


def fallback_main(args) -> None:
    new = load_variant(args.fallback)
    old = load_variant(args.baseline) if args.baseline else None
    assert old is None or old.relu is not new.relu
    try:
        import triton as triton_package
    except ImportError:  # a CPU machine without Triton: the torch-cpu variant needs none
        triton_package = None

    meta = dict(command="python benchmarks/studies/call_path.py " + " ".join(sys.argv[1:]),
                machine=machine(args.device), cpu=cpu_model(), torch=torch.__version__,
                triton=getattr(triton_package, "__version__", None), git=git_revision(),
                new=args.fallback.name, baseline=str(args.baseline) if args.baseline else None,
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
                loadavg=os.getloadavg())
    print(meta)
    result = dict(meta=meta, rows=[])
    out = args.out or ROOT / "results" / "host-cost" / "fallback.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    parts = {"calls": lambda: fallback_calls(new, old, args.device, args.repeats, args.calls),
             "gpu": lambda: fallback_gpu(new, old, min(args.repeats, 5)),
             "train": lambda: training_stages(new, old, args.device, args.repeats)}
    for name in args.parts:
        if name == "gpu" and args.device != "cuda":
            continue
        with torch.set_grad_enabled(name == "train"):
            result["rows"] += parts[name]()
        out.write_text(json.dumps(result, indent=1) + "\n")  # a run cut short keeps what it measured
    print(f"-> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fallback", "--variant", type=Path, default=None,
                        help="a variant (noarch for calls and gpu): its call path (see above)")
    parser.add_argument("--baseline", type=Path, default=None, help="--fallback: the variant to compare with")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu", help="--fallback: the tensors' device")
    parser.add_argument("--parts", nargs="+", choices=["calls", "gpu", "train"], default=["calls", "gpu"],
                        help="--fallback: calls (host time, noarch), gpu (GPU time, noarch, CUDA), "
                             "train (forward + backward, any variant)")
    parser.add_argument("--kernel", type=Path, default=None, help="a variant directory (default: build/'s CPU one)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[1024, 8192], help="float32 elements (4 KiB, 32 KiB)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.fallback:
        fallback_main(args)
        return

    from kernels import get_local_kernel

    kernel_dir = args.kernel or default_kernel()
    relu_kernel = get_local_kernel(kernel_dir, backend="cpu")
    functions = sys.modules[relu_kernel.relu.__module__]
    ops = functions.ops
    relu_builtin, relu_out_builtin = ops.relu.default._op, ops.relu_out.default._op
    increment_version = torch._C._increment_version
    is_compiling = torch.compiler.is_dynamo_compiling
    isa = ops.cpu_isa()
    rows = []
    print(f"{cpu_model()}, {isa}, torch {torch.__version__}, {torch.get_num_threads()} threads; us per call")
    for numel in args.sizes:
        x = torch.randn(numel)
        o = torch.empty_like(x)
        peers = {
            "torch.relu(x)": lambda: torch.relu(x),
            "relu(x)": lambda: relu_kernel.relu(x),
            "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o),
            "relu(x, out=o)": lambda: relu_kernel.relu(x, out=o),
            "o.copy_(x)": lambda: o.copy_(x),
            "op builtin: relu(x)": lambda: relu_builtin(x),
            "op builtin: relu_out(o, x)": lambda: relu_out_builtin(o, x),
            "torch.empty_like(x)": lambda: torch.empty_like(x),
            "is_dynamo_compiling()": lambda: is_compiling(),
            "version bump of out": lambda: increment_version((o,)),
        }
        for fn in peers.values():
            fn()
        samples = interleaved({k: HostSampler(fn, calls=args.calls) for k, fn in peers.items()}, args.repeats)
        us = {k: statistics.median(v) * 1e6 for k, v in samples.items()}
        rows.append(dict(numel=numel, bytes=numel * 4, us=us))
        print(f"float32 x {numel} ({numel * 4 // 1024} KiB):")
        for k, v in us.items():
            print(f"  {k:28} {v:6.3f}")
        print(f"  relu(x) / torch.relu(x) {us['relu(x)'] / us['torch.relu(x)']:.2f}x, "
              f"relu(x, out=o) / clamp_min(out=) {us['relu(x, out=o)'] / us['clamp_min(x, 0, out=o)']:.2f}x, "
              f"relu(x, out=o) / torch.relu(x) {us['relu(x, out=o)'] / us['torch.relu(x)']:.2f}x")
    meta = dict(command="python benchmarks/studies/call_path.py " + " ".join(sys.argv[1:]), cpu=cpu_model(), isa=isa,
                threads=torch.get_num_threads(), torch=torch.__version__, git=git_revision(),
                kernel=kernel_dir.name, loadavg=os.getloadavg(),
                date_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"))
    out = args.out or ROOT / "results" / f"cpu-{isa}" / "call_path.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    print(f"-> {out}")


if __name__ == "__main__":
    main()
