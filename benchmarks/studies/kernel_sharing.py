"""Study. Question: did compiling one CUDA kernel per op instead of one per dtype (120
__global__ kernels per arch instead of 228) change GPU time where the kernels changed? The
per-format dense kernels are the same SASS as before; changed are the dense kernels of the
float8 dtypes, of uint16/32/64 (one byte copy for every unsigned dtype) and the float16/bfloat16
gradients, every strided kernel (one per element size, the element function on the bits), and
the launch of strided passes below one wave (256-thread blocks where they had 128).

Two builds side by side in one process (torch's own op as a yardstick where it has one):

    python benchmarks/studies/kernel_sharing.py --new <variant dir> --old <variant dir> --out DIR

Points, GPU time per call from CUDA-graph replay of one buffer set (benchmarks/timing.py),
peers interleaved, medians of --repeats:
  dense     relu(x, out=o) for the changed dtypes and, as controls whose kernels did not
            change, float32, bfloat16, int8, uint8; x aligned and x = base[1:] (misaligned
            against o); 4 KiB .. 256 MiB of x
  backward  relu_backward(g, r) (allocating), float16 and bfloat16, float32 as the control
  views     relu(x, out=o) on views of one source (benchmarks/views.py's): a chunk (unit
            inner stride), every other column, a transposed chunk, a permute with short rows
            (the per-element kernel); source 256 KiB (below one wave) .. 256 MiB
  views-backward  relu_backward(g, r) with r a chunk of a source
Before timing, new and old must give the same bits (and torch.relu's, where it has the dtype).
Results: DIR/kernel_sharing.json, and a table of new / old per point.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from timing import load_build as load  # noqa: E402
from timing import KiB, MiB, GraphSampler, HostSampler, git_revision, interleaved, machine, medians  # noqa: E402

CHANGED_DENSE = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "uint16", "uint32", "uint64"]
CONTROL_DENSE = ["float32", "bfloat16", "int8", "uint8"]
VIEW_DTYPES = ["float32", "bfloat16", "float16", "int8", "float64", "uint8"]
VIEWS = {  # benchmarks/views.py's, on a ROWS x COLS source
    "chunk": lambda s: s[:, : s.shape[1] // 2],
    "cols-step2": lambda s: s[:, ::2],
    "chunk-t": lambda s: s[:, : s.shape[1] // 2].t(),
    "slice3d-permuted": lambda s: s.view(s.shape[0], 64, s.shape[1] // 64)[:, 1:, : 3 * s.shape[1] // 256].permute(2, 0, 1),
}
COLS = 2048


def random_of(dtype: torch.dtype, numel: int, device: str) -> torch.Tensor:
    """Random bits viewed as `dtype` (NaNs and infinities included for the floats)."""
    size = torch.empty((), dtype=dtype).element_size()
    return torch.randint(0, 256, (numel * size,), dtype=torch.uint8, device=device).view(dtype)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def timed(peers: dict, device: str, repeats: int) -> dict[str, float]:
    if device == "cuda":
        samplers = {name: GraphSampler(fn, calls=20) for name, fn in peers.items()}
    else:  # a smoke run of the study's own code on a machine without a GPU
        samplers = {name: HostSampler(fn, device=device, calls=20) for name, fn in peers.items()}
    return medians(interleaved(samplers, repeats))


def forward_peers(new, old, x: torch.Tensor, o: torch.Tensor) -> dict:
    def run(kernel):
        def call():
            kernel.relu(x, out=o)
            return o
        return call
    peers = {"new": run(new), "old": run(old)}
    o.untyped_storage().fill_(0)  # bytes, any layout: uint16-64 lack fill_ on some devices
    first = peers["new"]().clone()
    o.untyped_storage().fill_(1)
    assert same_bits(first, peers["old"]()), f"new and old builds differ on {x.dtype} {tuple(x.shape)}"
    if x.dtype.is_floating_point and x.dtype.itemsize >= 2:
        peers["clamp_min_out"] = lambda: torch.clamp_min(x, 0, out=o)
    return peers


def backward_peers(new, old, g: torch.Tensor, r: torch.Tensor) -> dict:
    peers = {"new": lambda: new._ops.ops.relu_backward(g, r), "old": lambda: old._ops.ops.relu_backward(g, r)}
    assert same_bits(peers["new"](), peers["old"]()), f"relu_backward differs on {r.dtype}"
    peers["threshold_backward"] = lambda: torch.ops.aten.threshold_backward(g, r, 0)
    return peers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="smoke run: the two smallest sizes of each kind")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sizes = (lambda *s: s[:2]) if args.quick else (lambda *s: s)
    new, old = load(args.new), load(args.old)
    device = args.device
    rows = []

    def record(**row):
        seconds = timed(row.pop("peers"), device, args.repeats)
        row["us"] = {name: round(s * 1e6, 3) for name, s in seconds.items()}
        row["new/old"] = round(seconds["new"] / seconds["old"], 4)
        rows.append(row)
        print(json.dumps(row), flush=True)

    with torch.no_grad():
        for name in CHANGED_DENSE + CONTROL_DENSE:
            dtype = getattr(torch, name)
            for nbytes in sizes(4 * KiB, 256 * KiB, 4 * MiB, 64 * MiB, 256 * MiB):
                numel = nbytes // dtype.itemsize
                base = random_of(dtype, numel + 1, device)
                o = torch.empty(numel, dtype=dtype, device=device)
                for aligned in (True, False):
                    x = base[:numel] if aligned else base[1:]
                    record(kind="dense", dtype=name, bytes=nbytes, aligned=aligned, changed=name in CHANGED_DENSE,
                           peers=forward_peers(new, old, x, o))
        for name in ("float16", "bfloat16", "float32"):
            dtype = getattr(torch, name)
            for nbytes in sizes(256 * KiB, 4 * MiB, 64 * MiB, 256 * MiB):
                numel = nbytes // dtype.itemsize
                g, r = torch.randn(numel, device=device).to(dtype), torch.randn(numel, device=device).to(dtype)
                record(kind="backward", dtype=name, bytes=nbytes, changed=name != "float32",
                       peers=backward_peers(new, old, g, r))
        for name in VIEW_DTYPES:
            dtype = getattr(torch, name)
            for nbytes in sizes(256 * KiB, 4 * MiB, 64 * MiB, 256 * MiB):
                source = random_of(dtype, nbytes // dtype.itemsize, device).view(-1, COLS)
                for view, make in VIEWS.items():
                    x = make(source)
                    o = torch.empty_like(x)
                    record(kind="views", dtype=name, bytes=nbytes, view=view, changed=True,
                           peers=forward_peers(new, old, x, o))
        for name in ("float32", "bfloat16", "float16"):
            dtype = getattr(torch, name)
            for nbytes in sizes(256 * KiB, 64 * MiB):
                r = VIEWS["chunk"](torch.randn(nbytes // dtype.itemsize, device=device).to(dtype).view(-1, COLS))
                g = torch.randn(r.shape, device=device).to(dtype)
                record(kind="views-backward", dtype=name, bytes=nbytes, view="chunk", changed=True,
                       peers=backward_peers(new, old, g, r))

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kernel_sharing.json").write_text(json.dumps({
        "command": "python benchmarks/studies/kernel_sharing.py " + " ".join(f"--{k} {v}" for k, v in vars(args).items() if k != "out"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(device), "torch": torch.__version__, "revision": git_revision(),
        "new": str(args.new), "old": str(args.old), "rows": rows,
    }, indent=1) + "\n")
    ratios = [r["new/old"] for r in rows]
    print(f"\nnew/old over {len(rows)} points: min {min(ratios):.3f}, max {max(ratios):.3f}")
    for kind in ("dense", "backward", "views", "views-backward"):
        for changed in (True, False):
            part = [r["new/old"] for r in rows if r["kind"] == kind and r["changed"] == changed]
            if part:
                print(f"  {kind:15s} {'changed' if changed else 'control':8s} {len(part):3d} points: "
                      f"{min(part):.3f} .. {max(part):.3f}")
    outside = [r for r in rows if not 0.98 <= r["new/old"] <= 1.02]
    print(f"outside 0.98-1.02: {len(outside)}")
    for r in outside:
        print("  ", {k: v for k, v in r.items() if k != "us"}, r["us"])


if __name__ == "__main__":
    main()
