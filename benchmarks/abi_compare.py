"""This build against another build of the package (e.g. the last full-ABI one), side by side
in one process, with torch's own ops as the yardstick: did moving to the torch stable ABI cost
call latency or speed?

    python benchmarks/abi_compare.py --new build/<variant> --old <other>/build/<variant> \
        --device cuda --out results/h200/stable-abi

Pairs (like with like): relu(x) vs torch.relu(x) (allocating), relu(x, out=o) vs
torch.clamp_min(x, 0, out=o) and o.copy_(x) (out=, the same reused buffers), eager, no grad.
  - "host": host-timed loop of calls plus one synchronize, per call: the dispatch path a
    Python caller pays (`kernels benchmark`'s view). Float32, 1024 and 4096 elements.
  - "gpu" (CUDA): GPU time per call from CUDA-graph replay, one buffer pair (hot), at sizes
    from 1 MiB to 1 GiB for float32, bfloat16, int8.
  - "cpu" (CPU): host-timed throughput at the same sizes up to 64 MiB.
Every peer is checked against torch's result (NaN-free input) before it is timed. Peers are
interleaved (A B C C B A ...) and each figure is the median of the repeats.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
MiB = 1024 * 1024


def load(variant_dir: Path):
    from kernels import get_local_kernel

    # The variant's own backend (noarch variants, torch-cpu, have no "-cpu-" in their name).
    backend = json.loads((variant_dir / "metadata.json").read_text())["backend"]["type"]
    return get_local_kernel(variant_dir, backend=backend)


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def host_time_per_call(fn, device: str, calls: int) -> float:
    sync(device)
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync(device)
    return (time.perf_counter() - start) / calls


def gpu_time_per_call(fn, calls: int = 20) -> float:
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    graph.replay()
    start.record()
    graph.replay()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / calls


def interleaved_medians(peers: dict, measure, repeats: int) -> dict[str, float]:
    samples = {name: [] for name in peers}
    order = list(peers)
    for r in range(repeats):
        for name in order if r % 2 == 0 else reversed(order):
            samples[name].append(measure(peers[name]))
    return {name: statistics.median(values) for name, values in samples.items()}


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


def machine(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name()
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    flags = open("/proc/cpuinfo").read()
    isa = "avx512" if " avx512bw" in flags else "avx2" if " avx2" in flags else "baseline"
    return f"{model} ({isa}), {torch.get_num_threads()} threads"


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
            medians = interleaved_medians(peers, lambda fn: host_time_per_call(fn, device, 2000), args.repeats)
            rows.append({"kind": "host", "dtype": "float32", "numel": numel, "seconds": medians})
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
                    medians = interleaved_medians(peers, gpu_time_per_call, max(5, args.repeats // 2))
                else:
                    calls = max(3, int(256 * MiB / size))
                    medians = interleaved_medians(peers, lambda fn: host_time_per_call(fn, device, calls), args.repeats)
                kind = "gpu" if device == "cuda" else "cpu"
                rows.append({"kind": kind, "dtype": str(dtype).removeprefix("torch."), "bytes": size, "seconds": medians})
                print(rows[-1], flush=True)
    revision = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"abi_compare_{device}.json").write_text(json.dumps({
        "command": "python benchmarks/abi_compare.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items() if k != "out"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(device), "python": platform.python_version(), "torch": torch.__version__,
        "revision": revision, "new": args.new.name, "old": args.old.name, "rows": rows,
    }, indent=1) + "\n")


if __name__ == "__main__":
    main()
