"""Bit-exact check of a built product's CUDA dense forms on one GPU (the sys.path route, as
l2_band.py): relu(x, out=o), relu(x), in place and the backward, for element counts around
every edge of the dense policy (the tile forms' one-tile grid of 256 vectors, the wave edge
between 1 x 256 and 2 x 128, the head and tail of views at odd offsets, the streaming
threshold of 3/4 of the device's L2) and for
every dtype the product serves that torch can compare. A second look where the maintained
tests (tests/test_cuda.py) need the whole suite's setup; it prints one line per failure and
a summary, and exits 1 on any failure.

    python benchmarks/studies/l2_band/check_forms.py --variant-dir build/<dir>/<variant>
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

KIB, MIB = 1 << 10, 1 << 20


def element_counts(l2_bytes: int, wave_threads: int, element_bytes: int) -> list[int]:
    """Counts at the edges: tiny, one tile (256 vectors = 4 KiB), the wave edge (one vector per
    resident thread: `wave_threads`, SMs x threads per SM), the L2 threshold."""
    per_vector = 16 // element_bytes
    tile = 256 * per_vector
    wave = wave_threads * per_vector
    counts = {0, 1, 2, per_vector - 1, per_vector, per_vector + 1, tile - 1, tile, tile + 1,
              3 * tile + 5, 132 * tile + 7, (1 * MIB) // element_bytes + 3,
              wave - per_vector, wave, wave + 1, wave + per_vector + 1}
    # Forward footprint 2 x bytes: the streaming form starts at 3/8 of the L2 per tensor.
    threshold = (3 * l2_bytes // 8) // element_bytes
    counts |= {threshold - per_vector - 1, threshold - 1, threshold, threshold + per_vector + 1}
    return sorted(c for c in counts if c >= 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None, help="write check_forms.json here")
    parser.add_argument("--device", default="cuda", help="cpu: the script's own logic, on a CPU build")
    args = parser.parse_args()

    import torch

    sys.path.insert(0, str(args.variant_dir.resolve()))
    import relu  # noqa: PLC0415

    device = args.device
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        name, l2_bytes = props.name, props.L2_cache_size
        wave_threads = props.multi_processor_count * props.max_threads_per_multi_processor
    else:  # small: the edges without large tensors
        name, l2_bytes, wave_threads = device, 4 * MIB, 8 * 2048
    dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
              torch.int32, torch.int64, torch.uint8, torch.float8_e4m3fn, torch.float8_e5m2]
    failures, checks = [], 0
    generator = torch.Generator(device=device).manual_seed(23)

    def bits(t):
        return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])

    def reference(x):
        positive = (x.to(torch.float64) > 0) if x.dtype.is_floating_point else (x > 0)
        return torch.where(positive, bits(x), torch.zeros((), dtype=bits(x).dtype, device=x.device))

    def record(ok: bool, what: str) -> None:
        nonlocal checks
        checks += 1
        if not ok:
            failures.append(what)
            print("FAIL", what, flush=True)

    for dtype in dtypes:
        size = torch.empty((), dtype=dtype).element_size()
        for n in element_counts(l2_bytes, wave_threads, size):
            for offset in (0, 1, 3):  # elements: a view at an odd offset has a head and a tail
                if dtype.is_floating_point:
                    base = torch.randn(n + offset, device=device, generator=generator).to(dtype)
                    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40, 1e-5],
                                            device=device).to(dtype)
                    k = min(specials.numel(), n + offset)
                    base[:k] = specials[:k]
                    base[base.numel() - k:] = specials[:k]
                else:
                    base = torch.randint(-100, 100, (n + offset,), device=device, generator=generator).to(dtype)
                x = base[offset:]
                want = reference(x)
                at = f"{str(dtype)[6:]} n={n} offset={offset}"
                o = torch.empty_like(x).view(torch.uint8).fill_(0xFF).view(dtype)
                relu.relu(x, out=o)
                record(torch.equal(bits(o), want), at + " out=")
                record(torch.equal(bits(relu.relu(x)), want), at + " allocating")
                inplace = x.clone()
                relu.relu(inplace, out=inplace)
                record(torch.equal(bits(inplace), want), at + " in place")
                if dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64) and n <= 4 * MIB:
                    leaf = x.clone().requires_grad_(True)
                    grad = torch.randn(n, device=device, generator=generator).to(dtype)
                    relu.relu(leaf).backward(grad)
                    positive = leaf.detach().to(torch.float64) > 0
                    want_grad = torch.where(positive, bits(grad), torch.zeros((), dtype=bits(grad).dtype,
                                                                               device=grad.device))
                    record(torch.equal(bits(leaf.grad), want_grad), at + " backward")
    summary = {"device": name, "l2_bytes": l2_bytes, "wave_threads": wave_threads, "checks": checks,
               "failures": failures}
    print(f"{checks} checks, {len(failures)} failures", flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "check_forms.json").write_text(json.dumps(summary, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
