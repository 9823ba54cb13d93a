"""Study. Question: did moving to the torch stable ABI cost call latency or speed? Answered
(PERFORMANCE.md, "The torch stable ABI"): GPU time unchanged (0.99-1.01x), host time per
call at 4096 float32 elements 1.10-1.14x torch.relu for relu(x). Results:
results/h200/stable-abi/abi_compare_cuda.json,
results/h200/stable-abi/after-wrapper/abi_compare_cuda.json. Kept as the tool that sets any
two builds of the package side by side (a restructured build against the previous one).

This build against another build of the package (e.g. the last full-ABI one), side by side
in one process, with torch's own ops as the yardstick:

    python benchmarks/studies/abi_compare.py --new build/<variant> --old <other>/build/<variant> \
        --device cuda --out results/h200/stable-abi

Pairs (like with like): relu(x) vs torch.relu(x) (allocating), relu(x, out=o) vs
torch.clamp_min(x, 0, out=o) and o.copy_(x) (out=, the same reused buffers), eager, no grad.
  - "host": host-timed loop of calls plus one synchronize, per call: the dispatch path a
    Python caller pays (`kernels benchmark`'s view). Float32, 1024 and 4096 elements.
  - "gpu" (CUDA): GPU time per call from CUDA-graph replay, one buffer pair (hot), at sizes
    from 1 MiB to 1 GiB for float32, bfloat16, int8.
  - "cpu" (CPU): host-timed throughput at the same sizes up to 64 MiB.
Every peer is checked against torch's result (NaN-free input) before it is timed. Peers are
interleaved (A B C C B A ...) and each figure is the median of the repeats (benchmarks/timing.py).
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
from timing import MiB, GraphSampler, HostSampler, git_revision, interleaved, machine, medians  # noqa: E402


def load(variant_dir: Path):
    from kernels import get_local_kernel

    # The variant's own backend (noarch variants, torch-cpu, have no "-cpu-" in their name).
    backend = json.loads((variant_dir / "metadata.json").read_text())["backend"]["type"]
    return get_local_kernel(variant_dir, backend=backend)


def timed(peers: dict, device: str, kind: str, calls: int, repeats: int) -> dict[str, float]:
    """Median seconds per call of each peer: "gpu", CUDA-graph replay of `calls` calls; else
    host-timed loops of `calls` calls."""
    if kind == "gpu":
        samplers = {name: GraphSampler(fn, calls=calls) for name, fn in peers.items()}
    else:
        samplers = {name: HostSampler(fn, device=device, calls=calls) for name, fn in peers.items()}
    return medians(interleaved(samplers, repeats))


def peers_for(new, old, x: torch.Tensor, o: torch.Tensor) -> dict:
    return {
        "new relu(x)": lambda: new.relu(x),
        "old relu(x)": lambda: old.relu(x),
        "torch.relu(x)": lambda: torch.relu(x),
        "new relu(x, out=o)": lambda: new.relu(x, out=o),
        "old relu(x, out=o)": lambda: old.relu(x, out=o),
        "clamp_min(x, 0, out=o)": lambda: torch.clamp_min(x, 0, out=o),
        "o.copy_(x)": lambda: o.copy_(x),
    }


def check(peers: dict, x: torch.Tensor, o: torch.Tensor) -> None:
    expected = torch.relu(x)
    for name, fn in peers.items():
        if "copy_" in name:
            continue
        o.fill_(7)
        result = fn()
        assert torch.equal(result, expected), name


def input_of(dtype: torch.dtype, numel: int, device: str) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(numel, device=device).to(dtype)
    return torch.randint(-100, 100, (numel,), device=device, dtype=dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    new, old = load(args.new), load(args.old)
    device = args.device
    rows = []
    with torch.no_grad():
        for numel in (1024, 4096):
            x = input_of(torch.float32, numel, device)
            o = torch.empty_like(x)
            peers = peers_for(new, old, x, o)
            check(peers, x, o)
            rows.append({"kind": "host", "dtype": "float32", "numel": numel,
                         "seconds": timed(peers, device, "host", 2000, args.repeats)})
            print(rows[-1], flush=True)
        sizes = [1 * MiB, 8 * MiB, 64 * MiB] + ([1024 * MiB] if device == "cuda" else [])
        for dtype in (torch.float32, torch.bfloat16, torch.int8):
            for size in sizes:
                numel = size // dtype.itemsize
                x = input_of(dtype, numel, device)
                o = torch.empty_like(x)
                peers = peers_for(new, old, x, o)
                check(peers, x, o)
                if device == "cuda":
                    seconds = timed(peers, device, "gpu", 20, max(5, args.repeats // 2))
                else:
                    seconds = timed(peers, device, "cpu", max(3, int(256 * MiB / size)), args.repeats)
                kind = "gpu" if device == "cuda" else "cpu"
                rows.append({"kind": kind, "dtype": str(dtype).removeprefix("torch."), "bytes": size, "seconds": seconds})
                print(rows[-1], flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"abi_compare_{device}.json").write_text(json.dumps({
        "command": "python benchmarks/studies/abi_compare.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items() if k != "out"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(device), "python": platform.python_version(), "torch": torch.__version__,
        "revision": git_revision(), "new": args.new.name, "old": args.old.name, "rows": rows,
    }, indent=1) + "\n")


if __name__ == "__main__":
    main()
