"""The ranges the card and PERFORMANCE.md quote for relu_squared and the gated ops, derived from
one results folder's relu-squared/relu_squared.json and gated/gated.json (benchmarks/
relu_squared.py, benchmarks/gated.py): for each named comparison, the peer's time over ours
(above 1.00x ours is faster), min-max over the dtypes, sizes and modes (cold, hot) it covers;
then the transformers client's (relu-squared/relu2_client.json, benchmarks/relu2_client.py)
plain time over swapped time per mode and workload, and whether its eager logits were equal.

    python benchmarks/family_summary.py results/7daee98/h200
    python benchmarks/family_summary.py results/7daee98/cpu-intel-xeon-avx512
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

MiB = 1 << 20

# name -> (file, form, op, ours, peer, smallest x in bytes[, largest]): one line of the summary each.
COMPARISONS = {
    "relu_squared forward vs eager": ("relu_squared", "allocating", "forward", "relu_squared", "eager", 0),
    "relu_squared forward vs eager, from 4 MiB": ("relu_squared", "allocating", "forward", "relu_squared", "eager", 4 * MiB),
    "relu_squared forward vs eager, from 64 MiB": ("relu_squared", "allocating", "forward", "relu_squared", "eager", 64 * MiB),
    "relu_squared forward vs torch.compile, from 1 MiB": ("relu_squared", "allocating", "forward", "relu_squared", "compile", MiB),
    "relu_squared forward vs Liger, from 1 MiB": ("relu_squared", "allocating", "forward", "relu_squared", "liger", MiB),
    "relu_squared out= vs a copy, from 64 MiB": ("relu_squared", "out", "forward", "relu_squared_out", "copy_", 64 * MiB),
    "relu_squared out= vs a copy, 64-256 MiB": ("relu_squared", "out", "forward", "relu_squared_out", "copy_", 64 * MiB,
                                                256 * MiB),
    "relu_squared out= vs eager out=": ("relu_squared", "out", "forward", "relu_squared_out", "eager_out", 0),
    "ReLUSquared forward+backward vs eager": ("relu_squared", "layer", "forward+backward", "ReLUSquared", "eager", 0),
    "ReLUSquared forward+backward vs eager, from 16 MiB": ("relu_squared", "layer", "forward+backward", "ReLUSquared", "eager", 16 * MiB),
    "ReLUSquared forward+backward vs Liger, from 1 MiB": ("relu_squared", "layer", "forward+backward", "ReLUSquared", "liger", MiB),
    "relu_and_mul forward vs eager, from 16 MiB": ("gated", "relu_and_mul", "forward", "relu_and_mul", "eager", 16 * MiB),
    "relu_and_mul forward vs torch.compile, from 1 MiB": ("gated", "relu_and_mul", "forward", "relu_and_mul", "compile", MiB),
    "fatrelu forward vs kernels-community/activation": ("gated", "fatrelu_and_mul", "forward", "relu_and_mul_t", "activation", 0),
    "fatrelu forward vs eager, from 16 MiB": ("gated", "fatrelu_and_mul", "forward", "relu_and_mul_t", "eager_t", 16 * MiB),
    "fatrelu forward vs torch.compile, from 1 MiB": ("gated", "fatrelu_and_mul", "forward", "relu_and_mul_t", "compile_t", MiB),
    "relu_squared_and_mul forward vs eager, from 16 MiB": ("gated", "relu_squared_and_mul", "forward", "relu_squared_and_mul", "eager_sq", 16 * MiB),
    "relu_squared_and_mul forward vs torch.compile, from 1 MiB": ("gated", "relu_squared_and_mul", "forward", "relu_squared_and_mul", "compile_sq", MiB),
    "ReGLU forward+backward vs eager, from 16 MiB": ("gated", "ReGLU", "forward+backward", "ReGLU", "eager_reglu", 16 * MiB),
    "ReGLU forward+backward vs torch.compile": ("gated", "ReGLU", "forward+backward", "ReGLU", "compile_reglu", 0),
    "FatreluAndMul forward+backward vs eager, from 16 MiB": ("gated", "FatreluAndMul", "forward+backward", "FatreluAndMul", "eager_fatrelu", 16 * MiB),
    "SReGLU forward+backward vs eager, from 16 MiB": ("gated", "SReGLU", "forward+backward", "SReGLU", "eager_sreglu", 16 * MiB),
    "SReGLU forward+backward vs torch.compile": ("gated", "SReGLU", "forward+backward", "SReGLU", "compile_sreglu", 0),
}
FILES = {"relu_squared": "relu-squared/relu_squared.json", "gated": "gated/gated.json"}
CLIENT = "relu-squared/relu2_client.json"


def ratios(folder: Path, name: str) -> list[tuple[float, dict]]:
    """(peer us / ours us, ours' record) per point of one comparison; [] where not measured."""
    file, form, op, ours, peer, smallest, *largest = COMPARISONS[name]
    largest = largest[0] if largest else float("inf")
    path = folder / FILES[file]
    if not path.exists():
        return []
    records = [r for r in json.loads(path.read_text())["records"]
               if r.get("form") == form and r["op"] == op and r.get("mode") in ("cold", "hot")]
    key = lambda r: (r["dtype"], r["bytes"], r["mode"], tuple(r.get("shape") or ()))  # noqa: E731
    peers = {key(r): r for r in records if r["peer"] == peer}
    return [(peers[key(r)]["us"] / r["us"], r) for r in records
            if r["peer"] == ours and smallest <= r["bytes"] <= largest and key(r) in peers]


def summary_lines(folder: Path) -> dict[str, str]:
    """name -> "0.97-1.02x" (two decimals, as the docs quote), for every measured comparison."""
    lines = {}
    for name in COMPARISONS:
        found = ratios(folder, name)
        if found:
            low, high = min(v for v, _ in found), max(v for v, _ in found)
            lines[name] = f"{low:.2f}-{high:.2f}x"
    return lines


def client_lines(folder: Path) -> dict[str, str]:
    """The client's "<mode> <workload>, plain / swapped" -> "1.03x", and its eager check."""
    path = folder / CLIENT
    if not path.exists():
        return {}
    lines = {}
    for r in json.loads(path.read_text())["records"]:
        if r["kind"] == "check":
            lines[f"client {r['mode']} logits bit-equal"] = str(r["logits_equal"])
        elif r["kind"] == "time":
            lines[f"client {r['mode']} {r['workload']}, plain / swapped"] = f"{r['plain_over_swapped']:.2f}x"
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--worst", action="store_true", help="name the point of each minimum")
    args = parser.parse_args()
    for name, text in summary_lines(args.folder).items():
        line = f"{name}: {text}"
        if args.worst:
            value, r = min(ratios(args.folder, name), key=lambda item: item[0])
            line += f"  (worst: {r['dtype']} {r['bytes'] / MiB:g} MiB {r['mode']})"
        print(line)
    for name, text in client_lines(args.folder).items():
        print(f"{name}: {text}")


if __name__ == "__main__":
    main()
