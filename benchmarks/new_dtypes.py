"""relu on the dtypes torch has no relu for (float8, uint16/32/64), against what a user can do
today and against a plain copy of the same bytes.

    python benchmarks/new_dtypes.py --device cuda --out results/h200/new-dtypes
    python benchmarks/new_dtypes.py --device cpu --out results/cpu-avx2 --sizes 1 16 256

Peers per dtype and size (x of SIZE bytes; o and every scratch buffer allocated once):
  float8_e4m3fn, float8_e5m2 (torch.relu, clamp_min and x > 0 raise NotImplementedError):
    relu(x, out=o)      this package: one pass over the float8 bytes
    relu(x)             this package, allocating
    upcast              torch.relu(x.to(bfloat16)).to(float8): today's way, allocating
    upcast out=         b.copy_(x); torch.relu_(b); o.copy_(b) with a preallocated bfloat16 b:
                        the same without allocations (three passes, two of them over bfloat16)
    o.copy_(x)          the ceiling: a copy of the same bytes
  uint16, uint32, uint64 (relu is the identity; torch has no relu for them either):
    relu(x, out=o), relu(x), and o.copy_(x), which is both what a user does today and the
    ceiling.

Timing, with benchmarks/abi_compare.py's helpers: CUDA, GPU time per call from CUDA-graph
replay (one buffer pair: hot, which from 64 MiB on is larger than an H200's L2 anyway); CPU,
host-timed loops of calls. Peers are interleaved (A B C C B A ...), each figure the median of
the repeats. Before it is timed every peer's output is checked: float8 peers against
relu in float32 (the input has no NaN; -0.0, which torch's CPU relu keeps, compares equal to
+0.0), unsigned peers bit for bit against x. Results: <out>/new_dtypes.json, rewritten after
every point, with the command, the machine (CPU model and ISA, or GPU), torch's version and
the git revision.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from abi_compare import MiB, gpu_time_per_call, host_time_per_call, interleaved_medians, machine  # noqa: E402

FLOAT8 = {"float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}
UNSIGNED = {"uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64}
DTYPES = {**FLOAT8, **UNSIGNED}
SIZES_MIB = {"cuda": [1, 4, 16, 64, 256, 1024], "cpu": [1, 4, 16, 64, 256]}
# Same-width integer views, for bit-for-bit checks (torch cannot compare these dtypes on the CPU).
BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def load_kernel(path: Path, device: str):
    from kernels import get_local_kernel

    return get_local_kernel(path, backend=device)


def input_of(dtype: torch.dtype, numel: int, device: str) -> torch.Tensor:
    if dtype in FLOAT8.values():
        # Normal values of both signs; in range for both formats, so no NaN and no inf.
        return (torch.randn(numel, device=device) * 3).to(dtype)
    # Every bit pattern, values above the signed maximum included.
    raw = torch.randint(0, 256, (numel * dtype.itemsize,), dtype=torch.uint8, device=device)
    return raw.view(dtype)


def peers_for(kernel, x: torch.Tensor, o: torch.Tensor) -> dict:
    peers = {
        "relu(x, out=o)": lambda: kernel.relu(x, out=o),
        "relu(x)": lambda: kernel.relu(x),
    }
    if x.dtype in FLOAT8.values():
        scratch = torch.empty(x.shape, dtype=torch.bfloat16, device=x.device)

        def upcast_out():
            scratch.copy_(x)
            torch.relu_(scratch)
            return o.copy_(scratch)

        peers["upcast"] = lambda: torch.relu(x.to(torch.bfloat16)).to(x.dtype)
        peers["upcast out="] = upcast_out
    peers["o.copy_(x)"] = lambda: o.copy_(x)
    return peers


def check(peers: dict, x: torch.Tensor, o: torch.Tensor) -> None:
    if x.dtype in FLOAT8.values():
        expected = torch.relu(x.to(torch.float32))
        same = lambda result: torch.equal(result.to(torch.float32), expected)  # noqa: E731
    else:
        bits = BITS[x.element_size()]
        same = lambda result: torch.equal(result.view(bits), x.view(bits))  # noqa: E731
    for name, fn in peers.items():
        if x.dtype in FLOAT8.values() and "copy_" in name:
            continue  # a copy, not a relu: the ceiling only
        o.view(torch.uint8).fill_(0x5A)  # a pattern relu of this input never writes everywhere
        assert same(fn()), f"{name} gives a wrong result for {x.dtype}"


def machine_of(device: str) -> str:
    """abi_compare's description (GPU name, or CPU model, ISA, threads), plus the CPU's family
    and model numbers, which tell CPU generations apart where a VM hides the model name."""
    text = machine(device)
    if device == "cpu":
        cpuinfo = open("/proc/cpuinfo").read()
        family, model = (re.search(rf"^{key}\s*:\s*(\S+)", cpuinfo, re.M) for key in ("cpu family", "model"))
        text += f"; cpu family {family and family[1]}, model {model and model[1]}"
    return text


def git_revision() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True)
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--kernel", type=Path, default=ROOT,
                        help="checkout, its build/ or one variant directory (default: this checkout)")
    parser.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES))
    parser.add_argument("--sizes", nargs="+", type=int, metavar="MIB",
                        help="sizes of x in MiB (default: cuda 1 .. 1024, cpu 1 .. 256)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    device = args.device
    kernel = load_kernel(args.kernel, device)
    sizes = [mib * MiB for mib in (args.sizes or SIZES_MIB[device])]
    report = {
        "command": "python benchmarks/new_dtypes.py " + " ".join(sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_of(device),
        "cpu_isa": kernel._ops.ops.cpu_isa(),  # the CPU kernel's SIMD variant
        "python": platform.python_version(),
        "torch": torch.__version__,
        "revision": git_revision(),
        "timing": "cuda: GPU time per call, CUDA-graph replay, hot; cpu: host-timed loops",
        "rows": [],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out_file = args.out / "new_dtypes.json"
    with torch.no_grad():
        for name in args.dtypes:
            dtype = DTYPES[name]
            for size in sizes:
                x = input_of(dtype, size // dtype.itemsize, device)
                o = torch.empty_like(x)
                peers = peers_for(kernel, x, o)
                check(peers, x, o)
                if device == "cuda":
                    calls = max(5, min(20, 20 * 64 * MiB // size))
                    medians = interleaved_medians(peers, lambda fn: gpu_time_per_call(fn, calls), args.repeats)
                else:
                    # At least 64 MiB per sample; one call from 64 MiB up (the float8 upcast
                    # path takes seconds per call there on a 2-core machine).
                    calls = max(1, 64 * MiB // size)
                    medians = interleaved_medians(peers, lambda fn: host_time_per_call(fn, device, calls),
                                                  args.repeats)
                copy = medians["o.copy_(x)"]
                row = {
                    "dtype": name, "bytes": size, "calls_per_sample": calls, "seconds": medians,
                    # Read x and write o: bytes moved per second.
                    "GB/s": {peer: round(2 * size / t / 1e9, 2) for peer, t in medians.items()},
                    "copy/relu_out": round(copy / medians["relu(x, out=o)"], 3),
                }
                if "upcast" in medians:
                    row["speedup vs upcast"] = round(medians["upcast"] / medians["relu(x, out=o)"], 2)
                    row["speedup vs upcast out="] = round(medians["upcast out="] / medians["relu(x, out=o)"], 2)
                report["rows"].append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "seconds"}), flush=True)
                out_file.write_text(json.dumps(report, indent=1) + "\n")
                del x, o, peers
    print(f"wrote {out_file}")


if __name__ == "__main__":
    main()
