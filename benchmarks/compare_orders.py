"""Two builds compared in both orders (benchmarks/compare.py run twice, new first and old
first): per point the new build's time over the old's, each order and their geometric mean, the
points outside a band, and the geometric mean over all GPU points.

    python benchmarks/compare_orders.py DIR [--band 0.02]   # DIR/compare-{new,old}-first.json
"""

import argparse
import json
import math
from pathlib import Path


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--band", type=float, default=0.02)
    args = parser.parse_args()
    points: dict = {}
    for order in ("new", "old"):
        for record in json.loads((args.dir / f"compare-{order}-first.json").read_text())["records"]:
            for call in ("relu(x)", "relu(x, out=o)"):
                key = (record["part"], record["mode"], record["dtype"], record["bytes"], call)
                points.setdefault(key, []).append(record["us"][f"new {call}"] / record["us"][f"old {call}"])
    gpu = {k: geomean(v) for k, v in points.items() if k[0] == "gpu"}
    if gpu:
        outside = {k: v for k, v in gpu.items() if abs(v - 1) > args.band}
        print(f"gpu: {len(gpu)} points, geometric mean new/old {geomean(gpu.values()):.4f}, "
              f"range {min(gpu.values()):.3f}-{max(gpu.values()):.3f}, outside +-{args.band:.0%}: {len(outside)}")
        for k, v in sorted(outside.items()):
            print(f"  {k}: {v:.3f}")
    print("| host call | bytes | new/old, new first | old first | geometric mean |\n|---|---|---|---|---|")
    for (part, _, dtype, size, call), ratios in sorted(points.items(), key=lambda kv: (kv[0][4], kv[0][3])):
        if part == "host":
            print(f"| {call} {dtype} | {size} | {ratios[0]:.3f} | {ratios[1]:.3f} | {geomean(ratios):.3f} |")


if __name__ == "__main__":
    main()
