"""The noarch torch-cuda (Triton) variant beside the compiled CUDA variant and torch, like for
like, in one process (H200: scripts/h200_triton.sh).

    python benchmarks/studies/triton_compare.py --triton build/torch-cuda \
        --compiled relu-build/build/torch-stable-abi211-cu130-x86_64-linux --out results/h200/triton

  - "calls": host time per eager call (loop of calls, one synchronize), float32 at 4 KiB to
    1 MiB: relu(x) vs torch.relu(x), relu(x, out=o) vs clamp_min(out=); the Triton variant as
    shipped and with each of its two paths forced (FORCE_PATH set in the loaded module:
    "triton" or "torch" for every call), to place the crossover.
  - "dense": GPU time per call from CUDA-graph replay (timing.GraphSampler), one buffer
    pair, 1 MiB to 1 GiB, float32, bfloat16, float16, int8, both forms.
  - "views": GPU time of relu(v) for views of an 8192 x 16384 source (a chunk, x[:, ::2], a
    transposed chunk, the contiguous control), float32 and bfloat16.
  --quick (what scripts/h200_triton.sh runs): dense float32 and bfloat16 at 1, 16 and 256 MiB,
  views float32 only.
Every peer is checked against torch.relu (NaN-free input) before it is timed; peers are
interleaved and each figure is the median of the repeats. Targets (issue): >= 0.95x the
compiled variant at DRAM sizes, >= 1.0x torch.relu from 1 MiB.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from abi_compare import input_of, load  # noqa: E402
from timing import KiB, MiB, GraphSampler, HostSampler, interleaved, machine, medians  # noqa: E402

CALL_SIZES = (4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB)
DENSE_SIZES = (1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1024 * MiB)
DENSE_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.int8)
VIEW_DTYPES = (torch.float32, torch.bfloat16)
# --quick: in the L2 (1, 16 MiB) and in DRAM (256 MiB), one float of each width class.
QUICK_DENSE_SIZES = (1 * MiB, 16 * MiB, 256 * MiB)
QUICK_DTYPES = (torch.float32, torch.bfloat16)
VIEW_SOURCE = (8192, 16384)


def noarch_module(kernel):
    """The loaded variant's _noarch.py (the module whose FORCE_PATH pins a path)."""
    return sys.modules[f"{kernel.__name__}._noarch"]


class Forced:
    """Runs fn with the Triton variant's FORCE_PATH set ("triton" or "torch")."""

    def __init__(self, module, path: str, fn):
        self.module, self.path, self.fn = module, path, fn

    def __call__(self):
        return self.fn()

    def __enter__(self):
        self.saved = self.module.FORCE_PATH
        self.module.FORCE_PATH = self.path

    def __exit__(self, *exc):
        self.module.FORCE_PATH = self.saved


def check(peers: dict, x: torch.Tensor) -> None:
    expected = torch.relu(x)
    for name, fn in peers.items():
        if isinstance(fn, Forced):
            with fn:
                result = fn()
        else:
            result = fn()
        assert torch.equal(result, expected), name


class ForcedSampler:
    """A sampler of a Forced call: the threshold patched for each sample, not each call."""

    def __init__(self, forced: Forced, sampler):
        self.forced, self.sampler = forced, sampler

    def sample(self) -> float:
        with self.forced:
            return self.sampler.sample()


def timed(peers: dict, sampler_of, repeats: int) -> dict[str, float]:
    """Median seconds per call of each peer, interleaved (timing.interleaved)."""
    samplers = {}
    for name, fn in peers.items():
        if isinstance(fn, Forced):
            with fn:
                samplers[name] = ForcedSampler(fn, sampler_of(fn))
        else:
            samplers[name] = sampler_of(fn)
    return medians(interleaved(samplers, repeats))


def call_rows(triton, compiled, repeats: int, quick: bool, device: str = "cuda") -> list[dict]:
    module = noarch_module(triton)
    rows = []
    for size in CALL_SIZES:
        x = input_of(torch.float32, size // 4, device)
        o = torch.empty_like(x)
        peers = {
            "triton relu(x)": lambda: triton.relu(x),
            "triton relu(x) [Triton path]": Forced(module, "triton", lambda: triton.relu(x)),
            "triton relu(x) [torch path]": Forced(module, "torch", lambda: triton.relu(x)),
            "compiled relu(x)": lambda: compiled.relu(x),
            "torch.relu(x)": lambda: torch.relu(x),
            "triton relu(x, out=o)": lambda: triton.relu(x, out=o),
            "triton relu(x, out=o) [Triton path]": Forced(module, "triton", lambda: triton.relu(x, out=o)),
            "triton relu(x, out=o) [torch path]": Forced(module, "torch", lambda: triton.relu(x, out=o)),
            "compiled relu(x, out=o)": lambda: compiled.relu(x, out=o),
            "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o),
        }
        check(peers, x)
        seconds = timed(peers, lambda fn: HostSampler(fn, device=device, calls=1000), repeats)
        rows.append({"kind": "calls", "dtype": "float32", "bytes": size, "seconds": seconds})
        print(rows[-1], flush=True)
    return rows


def dense_rows(triton, compiled, repeats: int, quick: bool, device: str = "cuda") -> list[dict]:
    rows = []
    for dtype in QUICK_DTYPES if quick else DENSE_DTYPES:
        for size in QUICK_DENSE_SIZES if quick else DENSE_SIZES:
            x = input_of(dtype, size // dtype.itemsize, device)
            o = torch.empty_like(x)
            peers = {
                "triton relu(x)": lambda: triton.relu(x),
                "compiled relu(x)": lambda: compiled.relu(x),
                "torch.relu(x)": lambda: torch.relu(x),
                "triton relu(x, out=o)": lambda: triton.relu(x, out=o),
                "compiled relu(x, out=o)": lambda: compiled.relu(x, out=o),
                "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o),
            }
            check(peers, x)
            seconds = timed(peers, GraphSampler, repeats)
            rows.append({"kind": "dense", "dtype": str(dtype).removeprefix("torch."), "bytes": size, "seconds": seconds})
            print(rows[-1], flush=True)
            del x, o
    return rows


def view_rows(triton, compiled, repeats: int, quick: bool, device: str = "cuda") -> list[dict]:
    rows = []
    for dtype in QUICK_DTYPES[:1] if quick else VIEW_DTYPES:
        rows_, cols = VIEW_SOURCE
        source = input_of(dtype, rows_ * cols, device).view(rows_, cols)
        half = cols // 2
        views = {
            f"chunk x[:, :{half}]": source[:, :half],
            "step x[:, ::2]": source[:, ::2],
            f"transposed chunk x[:, :{half}].t()": source[:, :half].t(),
            "contiguous control": source[: rows_ // 2].contiguous(),
        }
        for label, v in views.items():
            peers = {
                "triton relu(v)": lambda: triton.relu(v),
                "compiled relu(v)": lambda: compiled.relu(v),
                "torch.relu(v)": lambda: torch.relu(v),
            }
            check(peers, v)
            seconds = timed(peers, GraphSampler, repeats)
            rows.append({"kind": "views", "dtype": str(dtype).removeprefix("torch."), "view": label,
                         "bytes": v.numel() * v.element_size(), "seconds": seconds})
            print(rows[-1], flush=True)
        del source, views
    return rows


def speedup(seconds: dict, peer: str, ours: str) -> str:
    return f"{seconds[peer] / seconds[ours]:.2f}x"


def report(result: dict) -> str:
    """Markdown: each Triton figure as a speed ratio (peer time / Triton time; > 1: Triton is
    faster) against the compiled variant and torch, in the same form."""
    lines = [f"# The Triton variant beside the compiled one and torch ({result['machine']})", "",
             f"torch {result['torch']}, Triton {result['triton']}, revision {result['revision']}, "
             f"{result['date']}; SMALL_CALL_BYTES {result['small_call_bytes']}. Ratios: peer time / Triton "
             "variant time (> 1.00x: the Triton variant is faster).", ""]
    calls = [r for r in result["rows"] if r["kind"] == "calls"]
    if calls:
        lines += ["## Host time per eager call, float32 (us)", "",
                  "| size | relu(x) as shipped | Triton path | torch path | compiled | torch.relu "
                  "| relu(x, out=o) as shipped | Triton path | torch path | compiled | clamp_min(out=) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in calls:
            t = {k: f"{v * 1e6:.1f}" for k, v in r["seconds"].items()}
            lines.append(f"| {r['bytes'] // KiB} KiB | " + " | ".join(t[k] for k in (
                "triton relu(x)", "triton relu(x) [Triton path]", "triton relu(x) [torch path]",
                "compiled relu(x)", "torch.relu(x)", "triton relu(x, out=o)",
                "triton relu(x, out=o) [Triton path]", "triton relu(x, out=o) [torch path]",
                "compiled relu(x, out=o)", "clamp_min(x, 0, out=o)")) + " |")
        lines.append("")
    dense = [r for r in result["rows"] if r["kind"] == "dense"]
    if dense:
        lines += ["## Dense, GPU time (CUDA-graph replay, one buffer pair)", "",
                  "| dtype | size | Triton us (relu(x)) | vs compiled | vs torch.relu | Triton us (out=) "
                  "| vs compiled out= | vs clamp_min(out=) |", "|---|---|---|---|---|---|---|---|"]
        for r in dense:
            t = r["seconds"]
            lines.append(
                f"| {r['dtype']} | {r['bytes'] // MiB} MiB | {t['triton relu(x)'] * 1e6:.1f} "
                f"| {speedup(t, 'compiled relu(x)', 'triton relu(x)')} | {speedup(t, 'torch.relu(x)', 'triton relu(x)')} "
                f"| {t['triton relu(x, out=o)'] * 1e6:.1f} "
                f"| {speedup(t, 'compiled relu(x, out=o)', 'triton relu(x, out=o)')} "
                f"| {speedup(t, 'clamp_min(x, 0, out=o)', 'triton relu(x, out=o)')} |")
        lines.append("")
    views = [r for r in result["rows"] if r["kind"] == "views"]
    if views:
        lines += ["## Views of an 8192 x 16384 source, relu(v), GPU time", "",
                  "| dtype | view | Triton us | vs compiled | vs torch.relu |", "|---|---|---|---|---|"]
        for r in views:
            t = r["seconds"]
            lines.append(f"| {r['dtype']} | {r['view']} | {t['triton relu(v)'] * 1e6:.1f} "
                         f"| {speedup(t, 'compiled relu(v)', 'triton relu(v)')} "
                         f"| {speedup(t, 'torch.relu(v)', 'triton relu(v)')} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--triton", type=Path, help="build/torch-cuda")
    parser.add_argument("--compiled", type=Path, help="a compiled CUDA variant")
    parser.add_argument("--parts", nargs="+", choices=["calls", "dense", "views"], default=["calls", "dense", "views"])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true",
                        help="dense: float32 and bfloat16 at 1, 16, 256 MiB; views: float32 only")
    parser.add_argument("--revision", default="unknown", help="the git revision measured")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--report-only", action="store_true", help="rewrite report.md from <out>/triton_compare.json")
    args = parser.parse_args()
    if args.report_only:
        (args.out / "report.md").write_text(report(json.loads((args.out / "triton_compare.json").read_text())))
        return

    import triton as triton_package

    triton, compiled = load(args.triton), load(args.compiled)
    assert triton is not compiled and triton.__name__ != compiled.__name__
    result = {
        "command": "python benchmarks/studies/triton_compare.py " + " ".join(
            f"--{k} {' '.join(map(str, v)) if isinstance(v, list) else v}" for k, v in vars(args).items() if k != "out"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine("cuda"), "python": platform.python_version(), "torch": torch.__version__,
        "triton": triton_package.__version__, "small_call_bytes": noarch_module(triton).SMALL_CALL_BYTES,
        "revision": args.revision, "triton_variant": args.triton.name, "compiled_variant": args.compiled.name,
        "rows": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    parts = {"calls": call_rows, "dense": dense_rows, "views": view_rows}
    with torch.no_grad():
        for part in args.parts:
            result["rows"] += parts[part](triton, compiled, args.repeats, args.quick)
            # Rewritten after every part: a run cut short keeps what it measured.
            (args.out / "triton_compare.json").write_text(json.dumps(result, indent=1) + "\n")
            (args.out / "report.md").write_text(report(result))
    print(report(result))


if __name__ == "__main__":
    main()
