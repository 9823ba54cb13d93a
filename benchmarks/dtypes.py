"""The dtypes torch has no relu for (float8, uint16/32/64): relu against what a user can do
today and against a plain copy of the same bytes.

    python benchmarks/dtypes.py --device cuda --out DIR          # -> DIR/dtypes.json
    python benchmarks/dtypes.py --device cpu --out DIR --sizes 1 16 256

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

Timing, with benchmarks/timing.py's samplers: CUDA, GPU time per call from CUDA-graph
replay (one buffer pair: hot, which from 64 MiB on is larger than an H200's L2 anyway); CPU,
host-timed loops of calls. Peers are interleaved (A B C C B A ...), each figure the median of
the repeats. Before it is timed every peer's output is checked: float8 peers against
relu in float32 (the input has no NaN; -0.0, which torch's CPU relu keeps, compares equal to
+0.0), unsigned peers bit for bit against x. Results: <out>/dtypes.json, rewritten after
every point.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import ROOT, GraphSampler, HostSampler, MiB, interleaved, load_build, medians, run_meta, write_results  # noqa: E402

FLOAT8 = {"float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}
UNSIGNED = {"uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64}
DTYPES = {**FLOAT8, **UNSIGNED}
SIZES_MIB = {"cuda": [1, 4, 16, 64, 256, 1024], "cpu": [1, 4, 16, 64, 256]}
# Same-width integer views, for bit-for-bit checks (torch cannot compare these dtypes on the CPU).
BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


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
    kernel = load_build(args.kernel, device)
    sizes = [mib * MiB for mib in (args.sizes or SIZES_MIB[device])]
    meta = run_meta(device, kernel, timing="cuda: GPU time per call, CUDA-graph replay, hot; cpu: host-timed loops")
    records = []
    out_file = args.out / "dtypes.json"
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
                    samplers = {name: GraphSampler(fn, calls=calls) for name, fn in peers.items()}
                else:
                    # At least 64 MiB per sample; one call from 64 MiB up (the float8 upcast
                    # path takes seconds per call there on a 2-core machine).
                    calls = max(1, 64 * MiB // size)
                    samplers = {name: HostSampler(fn, device=device, calls=calls) for name, fn in peers.items()}
                times = medians(interleaved(samplers, args.repeats))
                del samplers  # a graph holds its pool of memory
                copy = times["o.copy_(x)"]
                row = {
                    "dtype": name, "bytes": size, "calls_per_sample": calls, "seconds": times,
                    # Read x and write o: bytes moved per second.
                    "GB/s": {peer: round(2 * size / t / 1e9, 2) for peer, t in times.items()},
                    "copy/relu_out": round(copy / times["relu(x, out=o)"], 3),
                }
                if "upcast" in times:
                    row["speedup vs upcast"] = round(times["upcast"] / times["relu(x, out=o)"], 2)
                    row["speedup vs upcast out="] = round(times["upcast out="] / times["relu(x, out=o)"], 2)
                records.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "seconds"}), flush=True)
                write_results(out_file, meta, records)
                del x, o, peers
    print(f"wrote {out_file}")


if __name__ == "__main__":
    main()
